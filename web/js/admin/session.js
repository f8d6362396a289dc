// The console's connection: an administrator logged in either with an admin phone (SMS code;
// the token is kept like the app's, under its own key, and resumed on every connection) or
// with the operator secret of <data-dir>/admin-secret, accepted only from loopback. The secret
// is kept in sessionStorage (this tab only) so a reload or reconnect logs in again; it changes
// at every server start, after which the console asks for it again.

import {ProtocolClient, ProtocolError} from '../core/client.js';
import {message, t} from '../core/i18n.js';
import {deviceName} from '../core/format.js';
import {fieldError} from '../ui/forms.js';

const TOKEN_KEY = 'bb.admin.auth';
const SECRET_KEY = 'bb.admin.secret';

function load(storage, key) {
    try { return JSON.parse(storage.getItem(key) || 'null'); } catch { return null; }
}

export function createAdminSession(store) {
    const readyHooks = [];
    let ready = false;
    let waiters = [];

    const client = new ProtocolClient({
        onState(state, retryAt) {
            if (state !== 'open') ready = false;
            store.update((s) => { s.conn = {state, retryAt}; });
        },
        // The console's pages follow no events: what they show is asked for again on a timer.
        onEvent() {},
        onOpen: logIn,
    });

    function becomeReady() {
        ready = true;
        const pending = waiters;
        waiters = [];
        pending.forEach((resolve) => resolve());
        readyHooks.forEach((hook) => hook());
    }

    async function logIn() {
        try {
            const info = await client.request('info.get');
            store.update((s) => { s.info = info; });
            const secret = load(sessionStorage, SECRET_KEY);
            const saved = load(localStorage, TOKEN_KEY);
            if (secret) await withSecret(secret, false);
            else if (saved) await resume(saved);
            else store.update((s) => { s.auth = {status: 'out', user: null, method: null, notice: s.auth.notice}; });
            client.healthy();
            becomeReady();
        } catch (error) {
            if (!(error instanceof ProtocolError) || error.code !== 'offline') console.warn('console login failed', error);
        }
    }

    async function resume(saved) {
        try {
            const reply = await client.request('auth.resume', {token: saved.token, last_seq: saved.seq || 0});
            localStorage.setItem(TOKEN_KEY, JSON.stringify({...saved, seq: reply.seq}));
            admitted(reply.user, 'phone');
        } catch (error) {
            if (['session_expired', 'session_revoked', 'unauthenticated'].includes(error.code)) {
                localStorage.removeItem(TOKEN_KEY);
                store.update((s) => { s.auth = {status: 'out', user: null, method: null, notice: message('admin.loginAgain')}; });
                return;
            }
            throw error;
        }
    }

    async function withSecret(secret, isNew) {
        try {
            await client.request('auth.admin_secret', {secret});
            sessionStorage.setItem(SECRET_KEY, JSON.stringify(secret));
            store.update((s) => { s.auth = {status: 'in', user: null, method: 'secret', notice: null}; });
        } catch (error) {
            sessionStorage.removeItem(SECRET_KEY);
            if (isNew && error.code === 'unauthenticated') throw fieldError('secret', 'admin.wrongSecret');
            if (isNew) throw error;
            store.update((s) => { s.auth = {status: 'out', user: null, method: null, notice: message('admin.secretChanged')}; });
        }
    }

    function admitted(user, method) {
        if (!user.is_administrator) {
            store.update((s) => { s.auth = {status: 'out', user: null, method: null, notice: t('admin.notAdministrator')}; });
            return false;
        }
        store.update((s) => { s.auth = {status: 'in', user, method, notice: null}; });
        return true;
    }

    /** Waits (up to 10 s) for a connection that has finished logging in, or is logged out. */
    async function whenReady() {
        if (ready) return;
        await new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new ProtocolError({code: 'offline', message: 'not connected'})), 10000);
            waiters.push(() => { clearTimeout(timer); resolve(); });
        });
    }

    async function call(op, data) {
        await whenReady();
        return client.request(op, data);
    }

    return {
        store,
        client,
        call,
        start: () => client.start(),
        onReady: (hook) => readyHooks.push(hook),
        async loginWithCode(phone, code) {
            const reply = await call('auth.login_code', {phone, code, device: `${deviceName()} · console`});
            if (!reply.user.is_administrator) {
                await client.request('auth.logout').catch(() => {});
                throw new ProtocolError({code: 'forbidden', message: t('admin.notAdministrator')});
            }
            localStorage.setItem(TOKEN_KEY, JSON.stringify({token: reply.token, seq: reply.seq}));
            admitted(reply.user, 'phone');
            readyHooks.forEach((hook) => hook());
        },
        async loginWithSecret(secret) {
            // Right after a logout the console is still reconnecting (logout drops the connection).
            await whenReady();
            await withSecret(secret, true);
            readyHooks.forEach((hook) => hook());
        },
        async logout() {
            if (store.state.auth.method === 'phone') await call('auth.logout').catch(() => {});
            localStorage.removeItem(TOKEN_KEY);
            sessionStorage.removeItem(SECRET_KEY);
            store.update((s) => { s.auth = {status: 'out', user: null, method: null, notice: null}; });
            // The built-in administrator ends only with its connection.
            client.drop();
        },
    };
}
