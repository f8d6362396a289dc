// The live overview: open orders and runners online per type (board.stats, every few seconds),
// publishes in the last minute (counted from the board feed: every order that enters with a
// created_at in the last 60 s), and what the protocol does not tell (connections).

import {h} from '../core/dom.js';
import {t} from '../core/i18n.js';
import {clock} from '../core/format.js';

const TYPES = ['express', 'purchase', 'bounty', 'group'];

export function overviewView(s) {
    const o = s.overview;
    if (s.auth.method === 'secret') {
        return h('section', {class: 'card'}, h('h2', t('admin.overview')), h('p', {class: 'notice notice-info', id: 'overview-secret'}, t('admin.overviewNeedsPhone')));
    }
    const minuteAgo = Date.now() - 60000;
    const perType = Object.fromEntries(TYPES.map((type) => [type, 0]));
    for (const [, order] of o.published) if (order.created_at >= minuteAgo) perType[order.type] += 1;
    const total = Object.values(perType).reduce((a, b) => a + b, 0);
    return h('section', {class: 'overview'},
        h('div', {class: 'figures'},
            figure(t('admin.publishesPerMinute'), String(total), 'figure-publishes'),
            figure(t('admin.openOrders'), o.stats ? String(TYPES.reduce((sum, type) => sum + o.stats[type].open, 0)) : '…', 'figure-open'),
            figure(t('admin.runnersOnline'), o.stats ? String(Math.max(...TYPES.map((type) => o.stats[type].runners_online))) : '…', 'figure-runners',
                t('admin.runnersOnlineHint')),
            figure(t('admin.connections'), '—', 'figure-connections', t('admin.connectionsMissing'))),
        h('table', {class: 'table', id: 'overview-table'},
            h('thead', h('tr', h('th', t('admin.type')), h('th', t('admin.openOrders')), h('th', t('admin.runnersOnline')), h('th', t('admin.publishesPerMinute')))),
            h('tbody', TYPES.map((type) => h('tr', {'data-type': type},
                h('th', t(`type.${type}`)),
                h('td', o.stats ? String(o.stats[type].open) : '…'),
                h('td', o.stats ? String(o.stats[type].runners_online) : '…'),
                h('td', String(perType[type])))))),
        h('p', {class: 'hint'}, o.updatedAt ? t('admin.updatedAt', {time: clock(o.updatedAt)}) : t('common.loading')));
}

function figure(label, value, id, hint = null) {
    return h('div', {class: 'figure card', id},
        h('span', {class: 'figure-value'}, value), h('span', {class: 'figure-label'}, label),
        hint && h('span', {class: 'hint'}, hint));
}
