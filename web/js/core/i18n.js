// Every string the pages show comes from one table per language (js/strings/). Chinese is the
// default; the choice is kept in localStorage. `{name}` in a string is filled from `params`.

import zh from '../strings/zh.js';
import en from '../strings/en.js';

const TABLES = {zh, en};
const STORAGE_KEY = 'bb.lang';

let language = (() => {
    try { return localStorage.getItem(STORAGE_KEY) === 'en' ? 'en' : 'zh'; } catch { return 'zh'; }
})();

export function currentLanguage() { return language; }

export function setLanguage(next) {
    language = next === 'en' ? 'en' : 'zh';
    try { localStorage.setItem(STORAGE_KEY, language); } catch { /* private mode: not kept */ }
    document.documentElement.lang = language === 'zh' ? 'zh-CN' : 'en';
}

export function t(key, params) {
    let text = TABLES[language][key];
    if (text === undefined) text = zh[key];
    if (text === undefined) return key;
    if (params) text = text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
    return text;
}

/**
 * Words to show later, kept as a key and its params rather than as text, so that a message the
 * store holds (a notice under a form) follows a change of language instead of staying in the
 * language it was made in. `say` turns one, or plain text, into what to show now.
 */
export function message(key, params) { return {key, params}; }

export function say(text) {
    return text !== null && typeof text === 'object' && 'key' in text ? t(text.key, text.params) : text;
}

/** Whether the table has `key` (an error code with its own wording). */
export function has(key) { return key in TABLES[language] || key in zh; }

document.documentElement.lang = language === 'zh' ? 'zh-CN' : 'en';
