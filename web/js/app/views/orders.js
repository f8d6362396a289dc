// 订单 Orders: what I published, what I run (or joined), and the history of both.

import {h} from '../../core/dom.js';
import {t} from '../../core/i18n.js';
import {dateTime} from '../../core/format.js';
import {empty, tabs} from '../../ui/components.js';
import {isFinal, orderTitle, rewardText, statusLabel, typeLabel} from '../order-text.js';

function lists(s) {
    const me = s.auth.user?.id;
    const get = (ids) => [...ids].map((id) => s.orders[id]).filter(Boolean);
    const published = get(s.mine.published).filter((o) => o.publisher === me);
    const running = get(s.mine.accepted).filter((o) => o.runner === me);
    const joined = get(s.mine.joined).filter((o) => (o.participants || []).includes(me));
    const newest = (a, b) => b.created_at - a.created_at || b.id - a.id;
    const unique = (list) => [...new Map(list.map((o) => [o.id, o])).values()];
    return {
        published: published.filter((o) => !isFinal(o)).sort(newest),
        accepted: unique([...running, ...joined]).filter((o) => !isFinal(o)).sort(newest),
        history: unique([...published, ...running, ...joined]).filter(isFinal).sort(newest),
    };
}

export function ordersView(s, ctx) {
    const tab = ['published', 'accepted', 'history'].includes(s.route.params.tab) ? s.route.params.tab : 'published';
    const all = lists(s);
    const shown = all[tab];
    const me = s.auth.user?.id;
    const more = Object.values(s.mine.cursors).some(Boolean);
    return h('main', {class: 'screen orders'},
        h('h1', {class: 'screen-title'}, t('orders.title')),
        tabs(['published', 'accepted', 'history'].map((key) => ({key, label: t(`orders.${key}`), href: `#/orders/${key}`,
            count: key === 'history' ? 0 : all[key].length})), tab, {idPrefix: 'orders-tab'}),
        !s.mine.loaded ? empty(t('common.loading'))
            : shown.length === 0 ? empty(t(`orders.empty.${tab}`))
            : h('ul', {class: 'rows', id: 'orders-list'}, shown.map((order) => h('li', row(order, me)))),
        tab === 'history' && more && h('button', {type: 'button', class: 'button secondary block', id: 'orders-more',
            onClick: () => ctx.session.loadMore()}, t('orders.more')));
}

function row(order, me) {
    const role = order.publisher === me ? t('role.publisher') : order.runner === me ? t('role.runner') : t('role.participant');
    return h('a', {class: 'order-row', href: `#/order/${order.id}`, 'data-order-id': order.id, 'data-status': order.status},
        h('div', {class: 'row-top'},
            h('span', {class: ['type-chip', `type-${order.type}`]}, typeLabel(order.type)),
            h('span', {class: ['status', `status-${order.status}`]}, statusLabel(order))),
        h('p', {class: 'row-title'}, orderTitle(order)),
        h('p', {class: 'row-facts'}, [role, rewardText(order), dateTime(order.created_at)].join(' · ')));
}
