// What the buttons do: each action is one request through the session, its reply applied to
// the store (the order.changed event that follows carries the same revision and changes
// nothing), and its errors shown where the action was started.

import {message, t} from '../core/i18n.js';
import {parseYuan, phone as formatPhone} from '../core/format.js';
import {navigate} from './router.js';
import {clearForm, fieldError, setNotice, submit} from '../ui/forms.js';
import {buildPublish} from './publish.js';
import {toast} from '../ui/toasts.js';

export function createActions(session, board) {
    const store = session.store;
    const call = session.call;
    let earningsLoading = false;

    async function orderStep(orderId, op, extra = {}, fields = [], fieldOfCode = {}) {
        const order = await submit(store, `order-${orderId}`, async () => {
            const reply = await call(op, {order_id: orderId, ...extra});
            session.upsert(reply.order);
            return reply.order;
        }, (field) => fields.includes(field), fieldOfCode);
        // A step the order's status no longer allows: the page was behind; show it as it is.
        const code = store.state.forms[`order-${orderId}`]?.code;
        if (!order && ['invalid_transition', 'order_taken', 'order_closed'].includes(code)) session.fetchOrder(orderId).catch(() => {});
        return order;
    }

    async function sendCode(formName, phone, purpose) {
        return submit(store, formName, async () => {
            if (!phone.trim()) throw fieldError('phone', 'login.needPhone');
            const request = {phone: phone.trim()};
            if (purpose !== 'login') request.purpose = purpose;
            const reply = await call('auth.request_code', request);
            store.update((s) => {
                s.codeWait[purpose] = Date.now() + (reply.retry_after || 60) * 1000;
                s.devCode = reply.dev_code ? {phone: reply.phone, code: reply.dev_code, purpose} : null;
            });
            setNotice(store, formName, message('login.codeSent', {phone: formatPhone(reply.phone)}));
        }, (field) => field === 'phone');
    }

    return {
        sendLoginCode: (phone) => sendCode('login-code', phone, 'login'),
        sendChangePhoneCode: (phone) => sendCode('me-phone', phone, 'change_phone'),

        async loginWithCode(phone, code) {
            const done = await submit(store, 'login-code', async () => {
                if (!code.trim()) throw fieldError('code', 'login.needCode');
                await session.loginWithCode(phone.trim(), code.trim());
                return true;
            }, (field) => field === 'phone' || field === 'code');
            if (done) { clearForm(store, 'login-code'); navigate('#/discover'); }
        },

        async loginWithPassword(phone, password) {
            const done = await submit(store, 'login-password', async () => {
                await session.loginWithPassword(phone.trim(), password);
                return true;
            }, (field) => field === 'phone' || field === 'password');
            if (done) { clearForm(store, 'login-password'); navigate('#/discover'); }
        },

        logout: () => session.logout(),

        async publish(type, draftValues) {
            const formName = `find-${type}`;
            const order = await submit(store, formName, async () => {
                const reply = await call('order.publish', buildPublish(type, draftValues));
                session.upsert(reply.order);
                return reply.order;
            }, (field) => field !== 'details' && field !== 'type');
            if (order) {
                clearForm(store, formName);
                toast(store, t('find.published'), 'ok');
                navigate(`#/order/${order.id}`);
            }
        },

        /** Accept from the Discover list: a lost race is said at the top of the list. */
        async acceptFromBoard(orderId) {
            store.update((s) => { s.board.notice = null; });
            const order = await submit(store, 'accept', async () => {
                const reply = await call('order.accept', {order_id: orderId});
                session.upsert(reply.order);
                return reply.order;
            }, () => false);
            if (order) {
                toast(store, t('order.acceptedToast'), 'ok');
                navigate(`#/order/${order.id}`);
                return;
            }
            const text = store.state.forms.accept?.error;
            store.update((s) => { s.board.notice = {kind: 'error', text, orderId}; });
        },

        async joinFromBoard(orderId) {
            const order = await submit(store, 'accept', async () => {
                const reply = await call('order.join', {order_id: orderId});
                session.upsert(reply.order);
                return reply.order;
            }, () => false);
            if (order) { toast(store, t('order.joinedToast'), 'ok'); navigate(`#/order/${order.id}`); return; }
            const text = store.state.forms.accept?.error;
            store.update((s) => { s.board.notice = {kind: 'error', text, orderId}; });
        },

        async accept(orderId) {
            if (await orderStep(orderId, 'order.accept')) toast(store, t('order.acceptedToast'), 'ok');
        },
        pickUp: (orderId) => orderStep(orderId, 'order.pick_up'),
        start: (orderId) => orderStep(orderId, 'order.start'),
        deliver(orderId, code) {
            const extra = code.trim() ? {code: code.trim()} : {};
            return orderStep(orderId, 'order.deliver', extra, ['code'], {wrong_delivery_code: 'code'});
        },
        confirm: (orderId) => orderStep(orderId, 'order.confirm'),
        abandon: (orderId) => orderStep(orderId, 'order.abandon'),
        cancel(orderId, reason) {
            return orderStep(orderId, 'order.cancel', reason.trim() ? {reason: reason.trim()} : {}, ['reason']);
        },
        async raiseTip(orderId, text) {
            const tip = parseYuan(text);
            if (tip === null) {
                return submit(store, `order-${orderId}`, async () => { throw fieldError('tip', 'find.badMoney'); }, () => true);
            }
            return orderStep(orderId, 'order.raise_tip', {tip}, ['tip']);
        },
        join: (orderId) => orderStep(orderId, 'order.join'),
        leave: (orderId) => orderStep(orderId, 'order.leave'),
        complete: (orderId) => orderStep(orderId, 'order.complete'),
        rate(orderId, stars, comment) {
            if (!stars) return submit(store, `order-${orderId}`, async () => { throw fieldError('stars', 'rate.pickStars'); }, () => true);
            const extra = {stars};
            if (comment.trim()) extra.comment = comment.trim();
            return orderStep(orderId, 'order.rate', extra, ['stars', 'comment']);
        },

        async loadUser(userId) {
            if (!userId || store.state.users[userId]) return;
            store.quietly((s) => { s.users[userId] = {id: userId, loading: true}; });
            try {
                const reply = await call('profile.get', {user_id: userId});
                store.update((s) => { s.users[userId] = reply.user; });
            } catch {
                store.quietly((s) => { delete s.users[userId]; });
            }
        },

        async updateProfile(values) {
            const user = await submit(store, 'me-profile', async () => {
                const reply = await call('profile.update', values);
                store.update((s) => { s.auth.user = reply.user; });
                return reply.user;
            });
            if (user) { clearForm(store, 'me-profile'); toast(store, t('profile.saved'), 'ok'); navigate('#/me'); }
        },

        async changePhone(phone, code) {
            const user = await submit(store, 'me-phone', async () => {
                const reply = await call('profile.change_phone', {phone: phone.trim(), code: code.trim()});
                store.update((s) => { s.auth.user = reply.user; s.devCode = null; });
                return reply.user;
            }, (field) => field === 'phone' || field === 'code');
            if (user) { clearForm(store, 'me-phone'); toast(store, t('phone.changed'), 'ok'); navigate('#/me'); }
        },

        async setPassword(values) {
            const hasPassword = store.state.auth.user?.has_password;
            const done = await submit(store, 'me-password', async () => {
                if (values.new_password !== values.repeat) throw fieldError('repeat', 'password.mismatch');
                if (hasPassword) {
                    await call('auth.change_password', {old_password: values.old_password, new_password: values.new_password});
                } else {
                    await call('auth.set_password', {password: values.new_password});
                }
                return true;
            }, (field) => ['old_password', 'new_password', 'password', 'repeat'].includes(field));
            if (done) {
                clearForm(store, 'me-password');
                await session.refreshProfile();
                toast(store, t('password.saved'), 'ok');
                navigate('#/me');
            }
        },

        async submitVerification(values) {
            const done = await submit(store, 'me-verify', async () => {
                const reply = await call('runner.submit_verification', values);
                store.update((s) => { if (s.auth.user) s.auth.user.verification = reply.verification; });
                return true;
            });
            if (done) { clearForm(store, 'me-verify'); toast(store, t('verify.submitted'), 'ok'); }
        },

        async sendFeedback(values) {
            const reply = await submit(store, 'me-feedback', () => call('feedback.submit', values));
            if (reply) {
                clearForm(store, 'me-feedback');
                setNotice(store, 'me-feedback', message('feedback.thanks', {id: reply.feedback_id}));
            }
        },

        loadSessions: () => submit(store, 'me-devices', () => session.refreshSessions()),

        async revokeSession(sessionId, isCurrent) {
            const done = await submit(store, 'me-devices', async () => {
                await call('auth.revoke_session', {session_id: sessionId});
                return true;
            }, () => false);
            if (!done) return;
            if (isCurrent) { session.signedOut(); return; }
            toast(store, t('devices.revoked'), 'ok');
            await session.refreshSessions().catch(() => {});
        },

        async loadEarnings() {
            if (earningsLoading) return;
            earningsLoading = true;
            try {
                const reply = await call('runner.earnings');
                store.update((s) => { s.earnings = reply; });
            } catch { /* not shown */ } finally {
                earningsLoading = false;
            }
        },
        board,
    };
}
