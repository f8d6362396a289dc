// Money, times and phone numbers as people read them. Money is integer fen on the wire and yuan
// on screen; times are milliseconds since the epoch on the wire and local time on screen.

import {currentLanguage, t} from './i18n.js';

export function yuan(fen) {
    const value = Number(fen) || 0;
    return `¥${(value / 100).toFixed(value % 100 === 0 ? 0 : 2)}`;
}

/** Parses what someone typed as yuan ("3", "3.5", "3.50") into fen; null when it is not money. */
export function parseYuan(text) {
    const trimmed = String(text ?? '').trim();
    if (!/^\d{1,7}(\.\d{1,2})?$/.test(trimmed)) return null;
    const [whole, fraction = ''] = trimmed.split('.');
    return Number(whole) * 100 + Number((fraction + '00').slice(0, 2));
}

export function fenToInput(fen) {
    if (fen === undefined || fen === null || fen === '') return '';
    return (fen / 100).toFixed(fen % 100 === 0 ? 0 : 2);
}

function pad(n) { return String(n).padStart(2, '0'); }

export function clock(ms) {
    const d = new Date(ms);
    return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function dateTime(ms) {
    const d = new Date(ms);
    const now = new Date();
    const sameDay = d.toDateString() === now.toDateString();
    if (sameDay) return `${t('time.today')} ${clock(ms)}`;
    if (currentLanguage() === 'zh') return `${d.getMonth() + 1}月${d.getDate()}日 ${clock(ms)}`;
    return `${d.toLocaleDateString('en-GB', {day: 'numeric', month: 'short'})} ${clock(ms)}`;
}

export function fullTime(ms) {
    const d = new Date(ms);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock(ms)}:${pad(d.getSeconds())}`;
}

/** "in 2 h 5 min" / "5 min ago", for deadlines. */
export function relative(ms, now = Date.now()) {
    const minutes = Math.round((ms - now) / 60000);
    const span = Math.abs(minutes);
    const text = span < 1 ? t('time.now')
        : span < 60 ? t('time.minutes', {n: span})
        : span < 48 * 60 ? t('time.hours', {h: Math.floor(span / 60), m: span % 60})
        : t('time.days', {n: Math.round(span / 1440)});
    if (span < 1) return text;
    return minutes > 0 ? t('time.in', {span: text}) : t('time.ago', {span: text});
}

/** The value of a `datetime-local` field for a time. */
export function localInput(ms) {
    const d = new Date(ms);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function parseLocalInput(text) {
    if (!text) return null;
    const ms = new Date(text).getTime();
    return Number.isFinite(ms) ? ms : null;
}

/**
 * A number as people in China write it: a mobile in groups of 3-4-4 (+8613912340001 →
 * 139 1234 0001), a 400/800 service line as 400-123-4567, a landline with its area code
 * (+861012345678 → 010-1234 5678); any other number stays in its E.164 form.
 */
export function phone(e164) {
    if (!e164) return '';
    const text = String(e164);
    let m = /^\+86(1\d{2})(\d{4})(\d{4})$/.exec(text);
    if (m) return `${m[1]} ${m[2]} ${m[3]}`;
    m = /^\+86([48]00)(\d{3})(\d{4})$/.exec(text);
    if (m) return `${m[1]}-${m[2]}-${m[3]}`;
    // Area codes: 10 and 2x are two digits, the rest three; the local number is 7 or 8 digits.
    m = /^\+86(?![48]00)(10|2\d|[3-9]\d{2})(\d{3,4})(\d{4})$/.exec(text);
    if (m) return `0${m[1]}-${m[2]} ${m[3]}`;
    return text;
}

/** What this browser calls itself in "logged-in devices". */
export function deviceName() {
    const ua = navigator.userAgent;
    const os = /iPhone/.test(ua) ? 'iPhone' : /iPad/.test(ua) ? 'iPad' : /Android/.test(ua) ? 'Android'
        : /Mac OS X/.test(ua) ? 'macOS' : /Windows/.test(ua) ? 'Windows' : /Linux/.test(ua) ? 'Linux' : '';
    const browser = /Edg\//.test(ua) ? 'Edge' : /Chrome\//.test(ua) ? 'Chrome' : /Firefox\//.test(ua) ? 'Firefox'
        : /Safari\//.test(ua) ? 'Safari' : 'Browser';
    return (os ? `${browser} · ${os}` : browser).slice(0, 64);
}
