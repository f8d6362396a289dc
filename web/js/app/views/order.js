// The order page, laid out by status: progress, the delivery code for the publisher, details
// (private ones only when the server sent them, i.e. to the parties), the people, every action
// the protocol allows this viewer in this status, ratings and the timeline. Live: it reads the
// order from the store, which order.changed keeps current.

import {h} from '../../core/dom.js';
import {t} from '../../core/i18n.js';
import {clock, dateTime, fullTime, yuan} from '../../core/format.js';
import {backLink, fieldId, formError} from '../../ui/components.js';
import {draft, formState} from '../../ui/forms.js';
import {detailRows, isFinal, noteText, progress, statusLabel, typeLabel, orderTitle} from '../order-text.js';

const DEFAULT_RULES = {cancel_grace_ms: 120000, cancel_fee: 200, auto_confirm_ms: 24 * 3600 * 1000};
export function orderView(s, ctx) {
    const id = s.route.params.id;
    const order = s.orders[id] || s.board.items.get(id);
    const form = `order-${id}`;
    if (!order) {
        const state = formState(s, `load-${id}`);
        return h('main', {class: 'screen order'}, backLink('#/orders'),
            state.error ? h('p', {class: 'form-error', role: 'alert'}, state.error) : h('p', {class: 'empty'}, t('common.loading')));
    }
    const me = s.auth.user?.id;
    const role = order.publisher === me ? 'publisher' : order.runner === me ? 'runner'
        : (order.participants || []).includes(me) ? 'participant' : 'viewer';
    for (const userId of [order.publisher, order.runner]) if (userId && userId !== me) ctx.actions.loadUser(userId);
    const back = role === 'viewer' ? `#/discover/${order.type}` : '#/orders';
    return h('main', {class: 'screen order', 'data-order-id': order.id, 'data-status': order.status, 'data-revision': order.revision},
        backLink(back),
        h('div', {class: 'order-head card'},
            h('div', {class: 'card-top'},
                h('span', {class: ['type-chip', `type-${order.type}`]}, typeLabel(order.type)),
                h('span', {class: ['status', `status-${order.status}`], id: 'order-status', 'data-status': order.status}, statusLabel(order))),
            h('h1', {class: 'order-title'}, orderTitle(order)),
            h('p', {class: 'muted'}, t('order.number', {id: order.id}), ' · ', t('order.created', {when: dateTime(order.created_at)})),
            progressBar(order)),
        role === 'publisher' && order.delivery_code && !isFinal(order) && h('div', {class: 'delivery-code card'},
            h('p', t('order.deliveryCodeLabel')),
            h('p', {class: 'code', id: 'delivery-code'}, order.delivery_code),
            h('p', {class: 'hint'}, t('order.deliveryCodeHint'))),
        statusNote(order, role, s),
        h('section', {class: 'card', 'aria-labelledby': 'order-actions-title'},
            h('h2', {id: 'order-actions-title', class: 'section-title'}, t('order.actions')),
            h('div', {id: 'order-actions'}, actions(order, role, s, ctx, form)),
            formError(ctx.store, form)),
        h('section', {class: 'card'},
            h('h2', {class: 'section-title'}, t('order.details')),
            role === 'viewer' && h('p', {class: 'hint'}, t('order.publicView'),
                ' ', h('button', {type: 'button', class: 'link', id: 'order-refresh', onClick: () => ctx.session.fetchOrder(order.id).catch(() => {})}, t('discover.refresh'))),
            h('dl', {class: 'details'}, detailRows(order).map(([label, value, isPrivate]) => [
                h('dt', label),
                h('dd', value, isPrivate ? h('span', {class: 'private', title: t('order.privateHint')}, t('order.private')) : null)]))),
        people(order, me, s),
        ratings(order),
        h('section', {class: 'card'},
            h('h2', {class: 'section-title'}, t('order.timeline')),
            h('ol', {class: 'timeline', id: 'order-timeline'}, [...order.timeline].reverse().map((entry) =>
                h('li', {'data-status': entry.status},
                    h('span', {class: 'when'}, fullTime(entry.at).slice(5)),
                    h('span', {class: 'what'}, timelineStatus(order, entry)),
                    h('span', {class: 'who'}, actorName(entry.actor, order, me, s)),
                    entry.note && h('span', {class: 'note'}, noteText(entry.note)))))));
}

function timelineStatus(order, entry) {
    return statusLabel({type: order.type, status: entry.status});
}

function actorName(actor, order, me, s) {
    if (actor === undefined || actor === null) return t('timeline.system');
    if (actor === me) return t('timeline.you');
    const name = s.users[actor]?.nickname;
    if (actor === order.publisher) return name ? t('timeline.publisherNamed', {name}) : t('role.publisher');
    if (actor === order.runner) return name || t('role.runner');
    return name || t('role.participant');
}

/**
 * Someone else's name once their profile has arrived; until then a grey placeholder, never a
 * bare user id (which reads like a fault after a reload).
 */
function personName(userId, me, s) {
    if (userId === me) return t('timeline.you');
    const name = s.users[userId]?.nickname;
    return name || h('span', {class: 'name-pending', 'aria-busy': 'true'}, t('people.loading'));
}

function progressBar(order) {
    if (['cancelled', 'expired'].includes(order.status)) return null;
    const {steps, index} = progress(order);
    return h('ol', {class: 'progress', 'aria-label': t('order.progress')},
        steps.map((label, i) => h('li', {class: i < index ? 'done' : i === index ? 'current' : null,
            'aria-current': i === index ? 'step' : null}, label)));
}

function statusNote(order, role, s) {
    let text = null;
    if (order.status === 'delivered' && order.auto_confirm_at) {
        text = role === 'publisher' ? t('order.confirmHint', {when: dateTime(order.auto_confirm_at)})
            : t('order.waitConfirm', {when: dateTime(order.auto_confirm_at)});
    } else if (order.status === 'cancelled' && order.cancellation) {
        const c = order.cancellation;
        text = c.cause === 'quorum_not_reached' ? t('order.cancelledQuorum')
            : t('order.cancelledBy', {reason: c.reason || t('order.noReason')}) + (c.fee ? ' ' + t('order.cancelFeePaid', {fee: yuan(c.fee)}) : '');
    } else if (order.status === 'expired') {
        text = t('order.expiredNote');
    } else if (role === 'viewer' && order.status !== 'open') {
        text = t('order.notOpen');
    }
    return text && h('p', {class: 'notice notice-info', id: 'order-note'}, text);
}

function people(order, me, s) {
    const name = (userId) => personName(userId, me, s);
    const verifiedMark = (userId) => (s.users[userId]?.is_verified_runner ? h('span', {class: 'badge ok'}, t('me.verified')) : null);
    return h('section', {class: 'card'},
        h('h2', {class: 'section-title'}, t('order.people')),
        h('dl', {class: 'details'},
            h('dt', t('role.publisher')), h('dd', {id: 'order-publisher'}, name(order.publisher)),
            order.type !== 'group' && [h('dt', t('role.runner')),
                h('dd', {id: 'order-runner'}, order.runner ? [name(order.runner), ' ', verifiedMark(order.runner)] : t('order.noRunner'))],
            order.type === 'group' && order.participants && [h('dt', t('field.participants')),
                h('dd', {id: 'order-participants'}, order.participants.flatMap((userId, index) => [index > 0 ? '、' : null, name(userId)]))]));
}

function ratings(order) {
    const rows = [];
    const stars = (n) => '★'.repeat(n) + '☆'.repeat(5 - n);
    if (order.rating_by_publisher) rows.push([t('rate.byPublisher'), order.rating_by_publisher]);
    if (order.rating_by_runner) rows.push([t('rate.byRunner'), order.rating_by_runner]);
    if (rows.length === 0) return null;
    return h('section', {class: 'card', id: 'order-ratings'},
        h('h2', {class: 'section-title'}, t('rate.title')),
        h('dl', {class: 'details'}, rows.map(([label, rating]) => [h('dt', label),
            h('dd', h('span', {class: 'stars', 'aria-label': t('rate.starsLabel', {n: rating.stars})}, stars(rating.stars)),
                rating.comment ? ` ${rating.comment}` : '')])));
}

/** Keeps what is typed into a panel's field in the panel's draft. */
function bind(ctx, uiForm, key) {
    const remember = (event) => ctx.store.quietly((st) => { draft(st, uiForm)[key] = event.target.value; });
    return {onInput: remember, onChange: remember};
}

function button(id, label, onClick, {kind = 'primary', disabled = false} = {}) {
    return h('button', {type: 'button', id, class: ['button', kind], disabled, onClick}, label);
}

function actions(order, role, s, ctx, form) {
    const a = ctx.actions;
    const ui = draft(s, `${form}-ui`);
    const busy = formState(s, form).busy;
    const setPanel = (panel) => () => ctx.store.update((st) => { draft(st, `${form}-ui`).panel = ui.panel === panel ? null : panel; });
    const now = Date.now();
    const list = [];
    const single = order.type !== 'group';
    const status = order.status;

    if (role === 'viewer') {
        if (single && status === 'open') {
            if (s.auth.user?.is_verified_runner) list.push(button('action-accept', t('action.accept'), () => a.accept(order.id), {disabled: busy}));
            else list.push(h('p', {class: 'hint'}, t('discover.verifyFirst'), ' ', h('a', {href: '#/me/verify', id: 'order-verify-link', class: 'tap'}, t('discover.verifyNow'))));
        }
        if (!single && status === 'open' && now < order.details.closes_at) {
            list.push(button('action-join', t('action.join'), () => a.join(order.id), {disabled: busy}));
        }
    }
    if (role === 'runner' && single) {
        if (status === 'accepted' && order.type !== 'bounty') list.push(button('action-pick-up', t('action.pickUp'), () => a.pickUp(order.id), {disabled: busy}));
        if (status === 'accepted' && order.type === 'bounty') list.push(button('action-start', t('action.start'), () => a.start(order.id), {disabled: busy}));
        if (status === 'picked_up' || status === 'in_progress' || (status === 'accepted' && order.type === 'bounty')) {
            list.push(deliverPanel(order, s, ctx, form, busy));
        }
        if (status === 'accepted') list.push(button('action-abandon', t('action.abandon'), () => a.abandon(order.id), {kind: 'secondary', disabled: busy}));
        if (status === 'completed' && !order.rating_by_runner) list.push(ratePanel(order, s, ctx, form, busy, 'publisher'));
    }
    if (role === 'publisher') {
        if (single && status === 'open') {
            list.push(button('action-raise-tip', t('action.raiseTip'), setPanel('tip'), {kind: 'secondary'}));
            if (ui.panel === 'tip') list.push(tipPanel(order, s, ctx, form, busy));
        }
        if (status === 'delivered') list.push(button('action-confirm', t('action.confirm'), () => a.confirm(order.id), {disabled: busy}));
        if (!single && (status === 'full' || (status === 'open' && now >= order.details.closes_at))) {
            list.push(button('action-complete', t('action.complete'), () => a.complete(order.id), {disabled: busy}));
        }
        if (['open', 'full', 'accepted', 'picked_up', 'in_progress'].includes(status)) {
            list.push(button('action-cancel', t('action.cancel'), setPanel('cancel'), {kind: 'danger-outline'}));
            if (ui.panel === 'cancel') list.push(cancelPanel(order, s, ctx, form, busy));
        }
        if (single && status === 'completed' && !order.rating_by_publisher) list.push(ratePanel(order, s, ctx, form, busy, 'runner'));
    }
    if (role === 'participant' && ['open', 'full'].includes(status) && now < order.details.closes_at) {
        list.push(button('action-leave', t('action.leave'), () => a.leave(order.id), {kind: 'secondary', disabled: busy}));
    }
    if (list.length === 0) list.push(h('p', {class: 'hint', id: 'order-no-actions'}, t(isFinal(order) ? 'order.finished' : 'order.nothingToDo')));
    return list;
}

function cancelPanel(order, s, ctx, form, busy) {
    const rules = {...DEFAULT_RULES, ...(s.info?.order_rules || {})};
    const held = ['accepted', 'picked_up', 'in_progress'].includes(order.status);
    const fee = yuan(rules.cancel_fee);
    let wording = t('cancel.free');
    if (held) {
        const accepted = [...order.timeline].reverse().find((entry) => entry.status === 'accepted');
        const graceEnds = (accepted ? accepted.at : order.created_at) + rules.cancel_grace_ms;
        wording = Date.now() < graceEnds ? t('cancel.withinGrace', {time: clock(graceEnds), fee, minutes: Math.round(rules.cancel_grace_ms / 60000)})
            : rules.cancel_fee > 0 ? t('cancel.afterGrace', {fee}) : t('cancel.afterGraceNoFee');
    }
    const uiForm = `${form}-ui`;
    const submitCancel = (event) => {
        event.preventDefault();
        ctx.actions.cancel(order.id, draft(ctx.store.state, uiForm).reason || '');
    };
    const errors = formState(s, form).errors;
    return h('form', {class: 'panel', id: 'cancel-panel', onSubmit: submitCancel, novalidate: true},
        h('p', {class: 'panel-text', id: 'cancel-wording'}, wording),
        held && reasonField(ctx, uiForm, errors.reason),
        h('button', {type: 'submit', class: 'button danger', id: 'cancel-confirm', disabled: busy}, t('cancel.confirm')));
}

function reasonField(ctx, uiForm, error) {
    const value = draft(ctx.store.state, uiForm).reason || '';
    const id = fieldId(uiForm, 'reason');
    return h('div', {class: ['field', error && 'has-error']},
        h('label', {for: id}, t('cancel.reason'), h('span', {class: 'required'}, ' *')),
        h('textarea', {id, name: 'reason', rows: 2, maxlength: 1000, value, 'aria-invalid': error ? 'true' : null,
            ...bind(ctx, uiForm, 'reason')}),
        error && h('p', {class: 'field-error', role: 'alert'}, error));
}

function tipPanel(order, s, ctx, form, busy) {
    const uiForm = `${form}-ui`;
    const errors = formState(s, form).errors;
    const id = fieldId(uiForm, 'tip');
    const onSubmit = (event) => { event.preventDefault(); ctx.actions.raiseTip(order.id, draft(ctx.store.state, uiForm).tip || ''); };
    return h('form', {class: 'panel', id: 'tip-panel', onSubmit, novalidate: true},
        h('div', {class: ['field', errors.tip && 'has-error']},
            h('label', {for: id}, t('tip.newTip')),
            h('input', {id, name: 'tip', inputmode: 'decimal', value: draft(s, uiForm).tip || '', 'aria-invalid': errors.tip ? 'true' : null,
                ...bind(ctx, uiForm, 'tip')}),
            h('p', {class: 'hint'}, t('tip.hint', {tip: yuan(order.tip)})),
            errors.tip && h('p', {class: 'field-error', role: 'alert'}, errors.tip)),
        h('button', {type: 'submit', class: 'button primary', id: 'raise-tip-confirm', disabled: busy}, t('tip.confirm')));
}

function deliverPanel(order, s, ctx, form, busy) {
    const uiForm = `${form}-ui`;
    const errors = formState(s, form).errors;
    const id = fieldId(uiForm, 'code');
    const onSubmit = (event) => { event.preventDefault(); ctx.actions.deliver(order.id, draft(ctx.store.state, uiForm).code || ''); };
    return h('form', {class: 'panel', id: 'deliver-panel', onSubmit, novalidate: true},
        h('div', {class: ['field', errors.code && 'has-error']},
            h('label', {for: id}, t('deliver.code')),
            h('input', {id, name: 'code', inputmode: 'numeric', maxlength: 16, value: draft(s, uiForm).code || '', 'aria-invalid': errors.code ? 'true' : null,
                ...bind(ctx, uiForm, 'code')}),
            h('p', {class: 'hint'}, t('deliver.hint')),
            errors.code && h('p', {class: 'field-error', role: 'alert'}, errors.code)),
        h('button', {type: 'submit', class: 'button primary', id: 'action-deliver', disabled: busy}, t('action.deliver')));
}

function ratePanel(order, s, ctx, form, busy, whom) {
    const uiForm = `${form}-ui`;
    const ui = draft(s, uiForm);
    const errors = formState(s, form).errors;
    // Picking stars answers "请选择星级": the error goes with the choice.
    const setStars = (n) => () => ctx.store.update((st) => {
        draft(st, uiForm).stars = n;
        delete formState(st, form).errors.stars;
    });
    const onSubmit = (event) => { event.preventDefault(); ctx.actions.rate(order.id, ui.stars || 0, draft(ctx.store.state, uiForm).comment || ''); };
    const commentId = fieldId(uiForm, 'comment');
    return h('form', {class: 'panel', id: 'rate-panel', onSubmit, novalidate: true},
        h('p', {class: 'panel-text'}, t(whom === 'runner' ? 'rate.rateRunner' : 'rate.ratePublisher')),
        h('div', {class: 'star-picker', role: 'radiogroup', 'aria-label': t('rate.stars')},
            [1, 2, 3, 4, 5].map((n) => h('button', {type: 'button', id: `rate-star-${n}`, role: 'radio',
                'aria-checked': String(ui.stars === n), 'aria-label': t('rate.starsLabel', {n}),
                class: ['star', (ui.stars || 0) >= n && 'on'], onClick: setStars(n)}, '★'))),
        errors.stars && h('p', {class: 'field-error', role: 'alert', id: 'rate-stars-error'}, errors.stars),
        h('div', {class: ['field', errors.comment && 'has-error']},
            h('label', {for: commentId}, t('rate.comment')),
            h('input', {id: commentId, name: 'comment', maxlength: 200, value: ui.comment || '', 'aria-invalid': errors.comment ? 'true' : null,
                ...bind(ctx, uiForm, 'comment')}),
            errors.comment && h('p', {class: 'field-error', role: 'alert'}, errors.comment)),
        h('button', {type: 'submit', class: 'button primary', id: 'rate-submit', disabled: busy}, t('rate.submit')));
}
