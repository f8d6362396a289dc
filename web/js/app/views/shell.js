// The frame around every screen: the top bar (name, connection state, language) and the tab bar.

import {h, icon} from '../../core/dom.js';
import {currentLanguage, t} from '../../core/i18n.js';
import {ICONS} from '../../ui/components.js';

export function connectionBadge(s, ctx) {
    const {state, retryAt} = s.conn;
    const shown = state === 'open' && s.auth.status !== 'unknown' ? 'online' : state === 'waiting' ? 'offline' : 'connecting';
    const seconds = retryAt ? Math.max(0, Math.ceil((retryAt - Date.now()) / 1000)) : 0;
    const text = shown === 'online' ? t('conn.online')
        : shown === 'offline' ? t('conn.retrying', {s: seconds})
        : t('conn.connecting');
    return h('div', {class: ['conn', `conn-${shown}`], id: 'conn-state', 'data-state': shown, role: 'status', 'aria-live': 'polite'},
        h('span', {class: 'dot', 'aria-hidden': 'true'}), h('span', {class: 'conn-text'}, text),
        shown === 'offline' && h('button', {type: 'button', class: 'link', id: 'conn-retry', onClick: () => ctx.session.client.retryNow()}, t('conn.retryNow')));
}

export function languageButton(ctx) {
    const next = currentLanguage() === 'zh' ? 'en' : 'zh';
    return h('button', {type: 'button', class: 'lang', id: 'lang-switch', lang: next === 'zh' ? 'zh-CN' : 'en',
        'aria-label': t('lang.switch'), onClick: () => ctx.setLanguage(next)}, next === 'zh' ? '中文' : 'EN');
}

export function topBar(s, ctx) {
    return h('header', {class: 'topbar'},
        h('div', {class: 'topbar-row'},
            h('a', {class: 'brand', href: '#/discover'}, h('span', {class: 'logo', 'aria-hidden': 'true'}, '帮'), h('span', t('app.name'))),
            h('div', {class: 'topbar-right'}, connectionBadge(s, ctx), languageButton(ctx))),
        toasts(s));
}

/** The top bar before login: no brand link, the same connection state and language. */
export function plainTopBar(s, ctx) {
    return h('header', {class: 'topbar plain'},
        h('div', {class: 'topbar-row'}, h('span'), h('div', {class: 'topbar-right'}, connectionBadge(s, ctx), languageButton(ctx))),
        toasts(s));
}

const TABS = [
    ['find', '#/find'],
    ['discover', '#/discover'],
    ['orders', '#/orders'],
    ['me', '#/me'],
];

export function tabBar(s) {
    const route = s.route.name;
    const current = route === 'me-page' ? 'me' : route === 'order' ? 'orders' : route;
    return h('nav', {class: 'tabbar', 'aria-label': t('nav.label')},
        TABS.map(([key, href]) => h('a', {href, id: `nav-${key}`, class: key === current ? 'active' : null,
            'aria-current': key === current ? 'page' : null}, icon(ICONS[key]), h('span', t(`nav.${key}`)))));
}

/** The one passing notice (ui/toasts.js), in a live region that is always there to be heard. */
export function toasts(s) {
    const item = s.toasts[s.toasts.length - 1];
    return h('div', {class: 'toasts', id: 'notice-area', role: 'status', 'aria-live': 'polite'},
        item && (item.link
            ? h('a', {class: ['toast', `toast-${item.kind}`], href: item.link, 'data-notice-id': item.id}, item.text)
            : h('div', {class: ['toast', `toast-${item.kind}`], 'data-notice-id': item.id}, item.text)));
}
