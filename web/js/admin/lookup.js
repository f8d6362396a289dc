// Looking up a user (by id or phone) and an order (by id, as its publisher sees it), for support
// calls; granting and revoking administration on a user found.

import {h} from '../core/dom.js';
import {t} from '../core/i18n.js';
import {dateTime, phone, yuan} from '../core/format.js';
import {field, formError, submitButton} from '../ui/components.js';
import {draft} from '../ui/forms.js';
import {cancellationCause, detailRows, noteText, orderTitle, statusLabel, typeLabel} from '../app/order-text.js';

export function lookupView(s, ctx) {
    const {store, actions} = ctx;
    const userForm = 'lookup-user';
    const orderForm = 'lookup-order';
    return h('div', {class: 'lookup'},
        h('section', {class: 'card'},
            h('h2', t('admin.findUser')),
            h('form', {id: userForm, class: 'inline-form', novalidate: true, onSubmit: (event) => {
                event.preventDefault();
                actions.lookupUser((draft(store.state, userForm).query || '').trim());
            }},
            field(store, userForm, 'query', {label: t('admin.userQuery'), attrs: {maxlength: 32, placeholder: t('admin.userQueryPlaceholder')}}),
            submitButton(store, userForm, t('admin.search'), t('common.loading'), {id: 'lookup-user-submit'})),
            formError(store, userForm),
            s.lookup.user && userCard(s.lookup.user, s, ctx)),
        h('section', {class: 'card'},
            h('h2', t('admin.findOrder')),
            h('form', {id: orderForm, class: 'inline-form', novalidate: true, onSubmit: (event) => {
                event.preventDefault();
                actions.lookupOrder((draft(store.state, orderForm).order_id || '').trim());
            }},
            field(store, orderForm, 'order_id', {label: t('admin.orderId'), attrs: {inputmode: 'numeric', maxlength: 20}}),
            submitButton(store, orderForm, t('admin.search'), t('common.loading'), {id: 'lookup-order-submit'})),
            formError(store, orderForm),
            s.lookup.order && orderCard(s.lookup.order)));
}

function userCard(user, s, ctx) {
    const v = user.verification;
    const rows = [
        [t('admin.userIdLabel'), String(user.id)],
        [t('profile.nickname'), user.nickname],
        [t('login.phone'), phone(user.phone)],
        [t('field.campus'), user.campus || '—'],
        [t('me.verification'), v ? `${t(`verify.status.${v.status}`)} · ${v.real_name} · ${v.student_id} · ${v.school}` : t('verify.status.none')],
        [t('me.administrator'), user.is_administrator ? t('admin.yes') : t('admin.no')],
        [t('admin.registered'), dateTime(user.registered_at)],
    ];
    return h('div', {class: 'result', id: 'lookup-user-result', 'data-user-id': user.id},
        h('dl', {class: 'details'}, rows.map(([label, value]) => [h('dt', label), h('dd', value)])),
        formError(ctx.store, 'admin-grant'),
        h('button', {type: 'button', class: 'button small secondary', id: 'toggle-admin',
            onClick: () => ctx.actions.setAdministrator(user.id, !user.is_administrator)},
        user.is_administrator ? t('admin.revokeAdmin') : t('admin.grantAdmin')));
}

function orderCard(order) {
    return h('div', {class: 'result', id: 'lookup-order-result', 'data-order-id': order.id},
        h('p', h('span', {class: ['type-chip', `type-${order.type}`]}, typeLabel(order.type)), ' ',
            h('span', {class: ['status', `status-${order.status}`]}, statusLabel(order))),
        h('p', {class: 'row-title'}, orderTitle(order)),
        h('dl', {class: 'details'},
            h('dt', t('role.publisher')), h('dd', t('admin.userId', {id: order.publisher})),
            h('dt', t('role.runner')), h('dd', order.runner ? t('admin.userId', {id: order.runner}) : '—'),
            order.delivery_code && [h('dt', t('order.deliveryCodeLabel')), h('dd', order.delivery_code)],
            detailRows(order).map(([label, value]) => [h('dt', label), h('dd', value)]),
            h('dt', t('order.timeline')), h('dd', order.timeline.map((entry) =>
                `${dateTime(entry.at)} ${statusLabel({type: order.type, status: entry.status})}${entry.note ? `（${noteText(entry.note)}）` : ''}`).join('；')),
            order.cancellation && [h('dt', t('status.cancelled')), h('dd', `${cancellationCause(order.cancellation.cause)}${order.cancellation.reason ? `：${order.cancellation.reason}` : ''} · ${yuan(order.cancellation.fee)}`)]));
}
