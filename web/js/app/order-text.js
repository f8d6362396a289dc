// How an order reads on screen: its title line, its facts, its status words. Private fields are
// shown only when the order as this viewer sees it carries them (the server leaves them out
// otherwise), and marked as private.

import {h} from '../core/dom.js';
import {t} from '../core/i18n.js';
import {dateTime, phone, relative, yuan} from '../core/format.js';

// The server's notes on timeline entries that are its own words (a cancel reason is the
// publisher's, shown as written).
const KNOWN_NOTES = {
    'runner gave it back': 'note.abandoned',
    'auto-confirmed': 'note.autoConfirmed',
    'delivery code confirmed': 'note.codeConfirmed',
    'quorum not reached': 'note.quorum',
    'closing time reached': 'note.closing',
    'closed at the deadline': 'note.deadline',
};

export function noteText(note) { return KNOWN_NOTES[note] ? t(KNOWN_NOTES[note]) : note; }

export function cancellationCause(cause) { return t(cause === 'quorum_not_reached' ? 'note.quorum' : 'role.publisher'); }

export function typeLabel(type) { return t(`type.${type}`); }

export function statusLabel(order) {
    if (order.type === 'group' && order.status === 'open') return t('status.group_open');
    return t(`status.${order.status}`);
}

export function orderTitle(order) {
    const d = order.details || {};
    switch (order.type) {
    case 'express': return t('title.express', {from: d.pickup_station, to: d.drop_off_place});
    case 'purchase': {
        const items = d.items || [];
        const first = items[0] ? `${items[0].name} ×${items[0].qty}` : '';
        return items.length > 1 ? t('title.purchaseMany', {first, n: items.length}) : first;
    }
    case 'bounty': return d.title;
    case 'group': return d.subject;
    default: return String(order.id);
    }
}

/** The reward line: tip for runners, price per share for groups. */
export function rewardText(order) {
    if (order.type === 'group') return t('group.pricePerShare', {price: yuan(order.details.price_per_share)});
    return yuan(order.tip);
}

export function isFinal(order) { return ['completed', 'cancelled', 'expired'].includes(order.status); }

/** [label, value, isPrivate] rows of the order's details. */
export function detailRows(order) {
    const d = order.details || {};
    const rows = [];
    const add = (key, value, isPrivate = false) => {
        if (value !== undefined && value !== null && value !== '') rows.push([t(key), value, isPrivate]);
    };
    add('field.campus', order.campus);
    switch (order.type) {
    case 'express':
        add('field.pickup_station', d.pickup_station);
        add('field.pickup_code', d.pickup_code, true);
        add('field.parcel_size', d.parcel_size && t(`size.${d.parcel_size}`));
        add('field.drop_off_place', d.drop_off_place);
        add('field.drop_off_room', d.drop_off_room, true);
        add('field.contact_phone', d.contact_phone && h('a', {href: `tel:${d.contact_phone}`, class: 'tap'}, phone(d.contact_phone)), true);
        break;
    case 'purchase':
        add('field.items', h('ul', {class: 'items'}, (d.items || []).map((item) =>
            h('li', `${item.name} ×${item.qty}`, item.note ? h('span', {class: 'muted'}, ` · ${item.note}`) : null))));
        add('field.store', d.store || t('purchase.anyStore'));
        add('detail.goods_budget', d.goods_budget ? yuan(d.goods_budget) : null);
        add('field.drop_off_place', d.drop_off_place);
        add('field.drop_off_room', d.drop_off_room, true);
        break;
    case 'bounty':
        add('field.description', h('span', {class: 'pre'}, d.description));
        add('field.place', d.place);
        break;
    case 'group':
        add('field.kind', t(`kind.${d.kind}`));
        add('field.participants', t('group.taken', {n: order.participant_count ?? 0, capacity: d.capacity}));
        add('field.minimum_fill', d.minimum_fill);
        add('detail.price_per_share', yuan(d.price_per_share));
        add('field.closes_at', `${dateTime(d.closes_at)} (${relative(d.closes_at)})`);
        break;
    default:
        break;
    }
    add('field.deadline', `${dateTime(order.deadline)} (${relative(order.deadline)})`);
    if (order.type !== 'group') add(order.type === 'bounty' ? 'detail.reward' : 'detail.tip', yuan(order.tip));
    return rows;
}

/** Short facts for a list card. */
export function cardFacts(order) {
    const d = order.details || {};
    const facts = [order.campus];
    if (order.type === 'express') facts.push(t(`size.${d.parcel_size || 'small'}`));
    if (order.type === 'purchase') facts.push(d.store || t('purchase.anyStore'), d.goods_budget ? t('purchase.budget', {budget: yuan(d.goods_budget)}) : null);
    if (order.type === 'bounty' && d.place) facts.push(d.place);
    if (order.type === 'group') facts.push(t(`kind.${d.kind}`), t('group.taken', {n: order.participant_count ?? 0, capacity: d.capacity}));
    facts.push(t('card.deadline', {when: relative(order.deadline)}));
    return facts.filter(Boolean);
}

/** The steps of the progress bar for the order's type, and how far it got. */
export function progress(order) {
    if (order.type === 'group') {
        const steps = ['group_open', 'full', 'completed'];
        const index = {open: 0, full: 1, completed: 2}[order.status] ?? -1;
        return {steps: steps.map((s) => t(`status.${s}`)), index};
    }
    const middle = order.type === 'bounty' ? 'in_progress' : 'picked_up';
    const steps = ['open', 'accepted', middle, 'delivered', 'completed'];
    let index = steps.indexOf(order.status);
    if (order.type === 'bounty' && order.status === 'delivered') index = 3;
    return {steps: steps.map((s) => t(`status.${s}`)), index};
}
