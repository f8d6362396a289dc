// The logged-in account behind the page: it logs every new connection in (auth.resume with the
// last personal seq, kept per user in localStorage), applies personal events to the store,
// and refetches what is shown when the server says the events are no longer kept (resync).
// Screens call the server through `call`, which waits until the connection is logged in.

import {ProtocolClient, ProtocolError} from '../core/client.js';
import {t} from '../core/i18n.js';
import {deviceName} from '../core/format.js';
import {emptyAccount} from './state.js';
import {toast} from '../ui/toasts.js';

const AUTH_KEY = 'bb.auth';
const seqKey = (userId) => `bb.seq.${userId}`;
const READY_WAIT_MS = 10000;

function loadAuth() {
    try {
        const saved = JSON.parse(localStorage.getItem(AUTH_KEY) || 'null');
        return saved && typeof saved.token === 'string' && Number.isInteger(saved.userId) ? saved : null;
    } catch { return null; }
}

function saveAuth(token, userId) { localStorage.setItem(AUTH_KEY, JSON.stringify({token, userId})); }
function clearAuth() { localStorage.removeItem(AUTH_KEY); }
function lastSeq(userId) { return Number(localStorage.getItem(seqKey(userId))) || 0; }
function saveSeq(userId, seq) { localStorage.setItem(seqKey(userId), String(seq)); }

/**
 * Who made a change, read from the order after it (and the copy before it, when the page had
 * one); null for the clock. Most changes add a timeline entry naming their actor. A rating adds
 * none: the newer of the two ratings is the one just given. A raised tip is the publisher's; a
 * join or a leave that did not change the status is the one participant who came or went.
 */
export function changeActor(before, order, change) {
    if (change === 'rated') {
        const byPublisher = order.rating_by_publisher?.at ?? -1;
        const byRunner = order.rating_by_runner?.at ?? -1;
        return byPublisher >= byRunner ? order.publisher : order.runner;
    }
    if (change === 'tip_raised') return order.publisher;
    if ((change === 'joined' || change === 'left') && before) {
        const was = new Set(before.participants || []);
        const now = new Set(order.participants || []);
        const moved = change === 'joined' ? [...now].find((id) => !was.has(id)) : [...was].find((id) => !now.has(id));
        if (moved !== undefined) return moved;
    }
    const last = order.timeline[order.timeline.length - 1];
    return last ? last.actor ?? null : null;
}

export function createSession(store) {
    const readyHooks = [];
    const eventHandlers = [];
    let ready = false;
    let waiters = [];
    let userId = null;
    let loggingOut = false;

    const client = new ProtocolClient({
        onState(state, retryAt) {
            if (state !== 'open') ready = false;
            store.update((s) => { s.conn = {state, retryAt}; });
        },
        onEvent: receive,
        onOpen: logIn,
    });

    function becomeReady() {
        ready = true;
        const pending = waiters;
        waiters = [];
        for (const waiter of pending) waiter.resolve();
        for (const hook of readyHooks) hook();
    }

    function waitUntilReady() {
        if (ready) return Promise.resolve();
        return new Promise((resolve, reject) => {
            const waiter = {resolve: () => { clearTimeout(timer); resolve(); }};
            const timer = setTimeout(() => {
                waiters = waiters.filter((w) => w !== waiter);
                reject(new ProtocolError({code: 'offline', message: 'not connected'}));
            }, READY_WAIT_MS);
            waiters.push(waiter);
        });
    }

    async function logIn() {
        try {
            const info = await client.request('info.get');
            store.update((s) => { s.info = info; });
            const saved = loadAuth();
            if (saved) await resume(saved);
            else store.update((s) => { if (s.auth.status === 'unknown') s.auth.status = 'out'; });
            client.healthy();
            becomeReady();
        } catch (error) {
            // The connection broke while logging in: the client reconnects and this runs again.
            if (!(error instanceof ProtocolError) || error.code !== 'offline') console.warn('login failed', error);
        }
    }

    async function resume(saved) {
        userId = saved.userId;
        const isFirst = !store.state.mine.loaded;
        let reply;
        try {
            reply = await client.request('auth.resume', {token: saved.token, last_seq: lastSeq(saved.userId)});
        } catch (error) {
            if (['session_expired', 'session_revoked', 'unauthenticated'].includes(error.code)) {
                signedOut(t('login.expired'));
                return;
            }
            throw error;
        }
        saveSeq(saved.userId, reply.seq);
        store.update((s) => { s.auth = {status: 'in', user: reply.user, notice: null}; });
        if (reply.resync || isFirst) await refetch();
    }

    /** Loads everything the screens show from the server afresh (first load, or resync). */
    async function refetch() {
        const roles = ['published', 'accepted', 'joined'];
        const replies = await Promise.all(roles.map((role) =>
            client.request('orders.mine', {role, scope: 'all', limit: 100})));
        store.update((s) => {
            roles.forEach((role, index) => {
                const ids = new Set();
                for (const order of replies[index].orders) { upsert(s, order, true); ids.add(order.id); }
                s.mine[role] = ids;
                s.mine.cursors[role] = replies[index].next_cursor || null;
            });
            s.mine.loaded = true;
        });
        const route = store.state.route;
        if (route.name === 'order') await fetchOrder(route.params.id).catch(() => {});
    }

    async function loadMore() {
        const roles = Object.keys(store.state.mine.cursors).filter((role) => store.state.mine.cursors[role]);
        for (const role of roles) {
            const reply = await call('orders.mine', {role, scope: 'all', limit: 100, cursor: store.state.mine.cursors[role]});
            store.update((s) => {
                for (const order of reply.orders) { upsert(s, order, true); s.mine[role].add(order.id); }
                s.mine.cursors[role] = reply.next_cursor || null;
            });
        }
    }

    async function fetchOrder(id) {
        const reply = await call('order.get', {order_id: id});
        store.update((s) => { upsert(s, reply.order, true); });
        return reply.order;
    }

    /** Keeps the newer of two copies of an order (by revision), and files it under my roles. */
    function upsert(s, order, force = false) {
        const known = s.orders[order.id];
        if (known && known.revision > order.revision) return;
        if (known && known.revision === order.revision && !force) return;
        s.orders[order.id] = order;
        if (userId === null) return;
        if (order.publisher === userId) s.mine.published.add(order.id);
        if (order.runner === userId) s.mine.accepted.add(order.id);
        if ((order.participants || []).includes(userId)) s.mine.joined.add(order.id);
    }

    function receive(message) {
        if (message.event.startsWith('feed.')) {
            for (const handler of eventHandlers) handler(message);
            return;
        }
        if (userId === null || typeof message.seq !== 'number') return;
        if (message.seq <= lastSeq(userId)) return; // already applied on this browser
        saveSeq(userId, message.seq);
        applyPersonal(message);
    }

    function applyPersonal(message) {
        const data = message.data || {};
        switch (message.event) {
        case 'order.changed': {
            const before = store.state.orders[data.order.id];
            store.update((s) => { upsert(s, data.order); });
            if (tellsMe(before, data.order, data.change)) {
                toast(store, t(`change.${data.change}`, {id: data.order.id}), 'info', `#/order/${data.order.id}`);
            }
            break;
        }
        case 'runner.verification_decided':
            toast(store, t(data.status === 'approved' ? 'verify.approvedToast' : 'verify.rejectedToast'),
                data.status === 'approved' ? 'ok' : 'error');
            refreshProfile();
            break;
        case 'account.logged_out':
            checkStillLoggedIn();
            break;
        case 'account.login':
            toast(store, t('devices.newLogin', {device: data.device || t('devices.unnamed')}), 'info');
            if (store.state.sessions) refreshSessions();
            break;
        case 'account.profile_updated':
        case 'account.phone_changed':
        case 'account.password_changed':
        case 'account.administrator_changed':
            refreshProfile();
            break;
        default:
            break;
        }
    }

    /**
     * Whether a change is news to this user: nobody is told of what they did themselves, on
     * this device or another. This device's own requests put the order in the store at the
     * event's revision before the event arrives (a reply precedes the pushes of its change).
     */
    function tellsMe(before, order, change) {
        if (before && before.revision >= order.revision) return false;
        const actor = changeActor(before, order, change);
        return actor !== userId;
    }

    async function refreshProfile() {
        try {
            const reply = await call('profile.get');
            store.update((s) => { if (s.auth.status === 'in') s.auth.user = reply.user; });
        } catch { /* shown again on the next reconnect */ }
    }

    async function refreshSessions() {
        const reply = await call('auth.sessions');
        store.update((s) => { s.sessions = reply.sessions; });
        return reply.sessions;
    }

    async function checkStillLoggedIn() {
        if (loggingOut) return;
        try {
            await refreshSessions();
        } catch (error) {
            if (error.code === 'unauthenticated') signedOut(t('login.loggedOutElsewhere'));
        }
    }

    function signedOut(notice = null) {
        clearAuth();
        userId = null;
        store.update((s) => {
            Object.assign(s, emptyAccount());
            s.auth = {status: 'out', user: null, notice};
            s.board.items = new Map();
            s.board.subscribed = false;
        });
        location.hash = '#/login';
    }

    /** Logs in with what a login operation replied (code or password). */
    async function loggedIn(reply) {
        userId = reply.user.id;
        saveAuth(reply.token, reply.user.id);
        saveSeq(reply.user.id, reply.seq);
        store.update((s) => {
            Object.assign(s, emptyAccount());
            s.auth = {status: 'in', user: reply.user, notice: null};
            s.devCode = null;
        });
        await refetch();
        for (const hook of readyHooks) hook();
    }

    async function call(op, data) {
        if (!ready) await waitUntilReady();
        return client.request(op, data);
    }

    return {
        store,
        client,
        call,
        start: () => client.start(),
        onReady: (hook) => readyHooks.push(hook),
        onFeed: (handler) => eventHandlers.push(handler),
        get userId() { return userId; },
        upsert: (order) => store.update((s) => upsert(s, order)),
        fetchOrder,
        loadMore,
        refreshProfile,
        refreshSessions,
        async loginWithCode(phone, code) {
            await loggedIn(await call('auth.login_code', {phone, code, device: deviceName()}));
        },
        async loginWithPassword(phone, password) {
            await loggedIn(await call('auth.login_password', {phone, password, device: deviceName()}));
        },
        async logout() {
            loggingOut = true;
            try { await call('auth.logout'); } finally { loggingOut = false; signedOut(); }
        },
        signedOut,
    };
}
