// The operator console's entry point: store, connection, actions, and one render from the
// store. Screens: overview, verifications, feedback, look-up (chosen by the location hash).

import {h, patch} from '../core/dom.js';
import {setLanguage, t} from '../core/i18n.js';
import {createStore} from '../core/store.js';
import {fieldError, submit} from '../ui/forms.js';
import {toast} from '../ui/toasts.js';
import {connectionBadge, languageButton, toasts} from '../app/views/shell.js';
import {createAdminSession} from './session.js';
import {feedbackView} from './feedback.js';
import {loginView} from './login.js';
import {lookupView} from './lookup.js';
import {overviewView} from './overview.js';
import {verificationsView} from './verifications.js';

const STATS_EVERY_MS = 5000;
const PENDING_EVERY_MS = 10000;

const store = createStore({
    conn: {state: 'idle', retryAt: null},
    info: null,
    auth: {status: 'unknown', user: null, method: null, notice: null},
    route: 'overview',
    pending: null,
    feedback: {items: null, next: null},
    lookup: {user: null, order: null},
    overview: {stats: null, updatedAt: null},
    forms: {}, drafts: {}, toasts: [], devCode: null, codeWait: {},
});
const session = createAdminSession(store);
const call = session.call;

const actions = {
    async sendCode(phone) {
        await submit(store, 'admin-login-code', async () => {
            if (!phone.trim()) throw fieldError('phone', 'login.needPhone');
            const reply = await call('auth.request_code', {phone: phone.trim()});
            store.update((s) => {
                s.codeWait.login = Date.now() + (reply.retry_after || 60) * 1000;
                s.devCode = reply.dev_code ? {phone: reply.phone, code: reply.dev_code, purpose: 'login'} : null;
            });
        }, (field) => field === 'phone');
    },
    async loginWithCode(phone, code) {
        await submit(store, 'admin-login-code', async () => {
            if (!code.trim()) throw fieldError('code', 'login.needCode');
            await session.loginWithCode(phone.trim(), code.trim());
            store.update((s) => { s.devCode = null; delete s.drafts['admin-login-code']; });
        }, (field) => field === 'phone' || field === 'code');
    },
    async loginWithSecret(secret) {
        await submit(store, 'admin-login-secret', async () => {
            if (!secret) throw fieldError('secret', 'admin.needSecret');
            await session.loginWithSecret(secret);
            store.update((s) => { delete s.drafts['admin-login-secret']; });
        }, (field) => field === 'secret');
    },
    async logout() {
        await session.logout();
        store.update((s) => {
            s.pending = null;
            s.feedback = {items: null, next: null};
            s.lookup = {user: null, order: null};
            s.overview = {stats: null, updatedAt: null};
        });
    },
    async loadPending() {
        const reply = await submit(store, 'pending', () => call('admin.pending_verifications'));
        if (reply) store.update((s) => { s.pending = reply.users; });
    },
    async decide(userId, decision, reason = '') {
        const form = `decide-${userId}`;
        const request = {user_id: userId, decision};
        if (decision === 'reject') {
            if (!reason.trim()) {
                await submit(store, form, async () => { throw fieldError('reason', 'admin.needReason'); }, () => false);
                return;
            }
            request.reason = reason.trim();
        }
        const reply = await submit(store, form, () => call('admin.decide_verification', request), () => false);
        if (!reply) return;
        toast(store, t(decision === 'approve' ? 'admin.approved' : 'admin.rejected', {name: reply.user.verification?.real_name || reply.user.nickname}), 'ok');
        store.update((s) => { s.pending = (s.pending || []).filter((user) => user.id !== userId); });
    },
    async loadFeedback(more) {
        const request = {limit: 20};
        if (more && store.state.feedback.next) request.before = store.state.feedback.next;
        const reply = await submit(store, 'feedback', () => call('admin.list_feedback', request));
        if (!reply) return;
        store.update((s) => {
            s.feedback.items = more ? [...(s.feedback.items || []), ...reply.feedback] : reply.feedback;
            s.feedback.next = reply.next_before || null;
        });
    },
    async lookupUser(query) {
        const user = await submit(store, 'lookup-user', async () => {
            if (!query) throw fieldError('query', 'find.required');
            const request = /^\d{1,9}$/.test(query) ? {user_id: Number(query)} : {phone: query};
            return (await call('admin.user', request)).user;
        }, (field) => field === 'query');
        store.update((s) => { s.lookup.user = user || null; });
    },
    async lookupOrder(text) {
        const order = await submit(store, 'lookup-order', async () => {
            if (!/^\d+$/.test(text)) throw fieldError('order_id', 'find.badNumber');
            return (await call('admin.order', {order_id: Number(text)})).order;
        }, (field) => field === 'order_id');
        store.update((s) => { s.lookup.order = order || null; });
    },
    async setAdministrator(userId, grant) {
        const reply = await submit(store, 'admin-grant', () => call(grant ? 'admin.grant_admin' : 'admin.revoke_admin', {user_id: userId}), () => false);
        if (reply) store.update((s) => { s.lookup.user = reply.user; });
    },
};

// The overview's figures: admin.stats on a timer, while the overview is open.
let statsTimer = null;
let pendingTimer = null;

async function refreshStats() {
    try {
        const reply = await call('admin.stats');
        store.update((s) => { s.overview.stats = reply; s.overview.updatedAt = Date.now(); });
    } catch { /* shown as it was */ }
}

function enter() {
    const s = store.state;
    clearInterval(statsTimer);
    clearInterval(pendingTimer);
    statsTimer = pendingTimer = null;
    if (s.auth.status !== 'in') return;
    if (s.route === 'overview') {
        refreshStats();
        statsTimer = setInterval(refreshStats, STATS_EVERY_MS);
    }
    if (s.route === 'verifications') {
        actions.loadPending();
        pendingTimer = setInterval(actions.loadPending, PENDING_EVERY_MS);
    }
    if (s.route === 'feedback') actions.loadFeedback(false);
}

const SCREENS = {overview: overviewView, verifications: verificationsView, feedback: feedbackView, lookup: lookupView};
const ctx = {
    store, session, actions,
    setLanguage(language) { setLanguage(language); document.title = t('admin.title'); store.update(() => {}); },
};

function render(s) {
    const header = h('header', {class: 'console-bar'},
        h('div', {class: 'topbar-row'},
            h('a', {class: 'brand', href: '#/overview'}, h('span', {class: 'logo', 'aria-hidden': 'true'}, '帮'), h('span', {class: 'brand-name'}, t('admin.title'))),
            h('div', {class: 'topbar-right'},
                connectionBadge(s, ctx), languageButton(ctx),
                s.auth.status === 'in' && h('span', {class: 'muted who', id: 'admin-who'},
                    s.auth.method === 'secret' ? t('admin.operator') : s.auth.user?.nickname),
                s.auth.status === 'in' && h('button', {type: 'button', class: 'button small secondary', id: 'admin-logout', onClick: actions.logout}, t('me.logout')))),
        toasts(s));
    let body;
    if (s.auth.status === 'unknown') body = h('p', {class: 'empty'}, t('common.loading'));
    else if (s.auth.status === 'out') body = loginView(s, ctx);
    else {
        body = h('main', {class: 'console-main'},
            h('nav', {class: 'tabs console-tabs', role: 'tablist'}, Object.keys(SCREENS).map((key) =>
                h('a', {href: `#/${key}`, id: `console-tab-${key}`, role: 'tab', class: s.route === key ? 'active' : null,
                    'aria-selected': String(s.route === key)}, t(`admin.tab.${key}`)))),
            SCREENS[s.route](s, ctx));
    }
    patch(document.getElementById('console'), [header, body]);
}

function onRoute() {
    const name = location.hash.replace(/^#\//, '');
    store.update((s) => { s.route = SCREENS[name] ? name : 'overview'; });
    enter();
}

window.addEventListener('hashchange', onRoute);
session.onReady(enter);
setInterval(() => {
    const s = store.state;
    if (s.conn.state === 'waiting' || (s.codeWait.login || 0) > Date.now() || s.route === 'overview') store.update(() => {});
}, 1000);
store.subscribe(render);
document.title = t('admin.title');
onRoute();
session.start();
