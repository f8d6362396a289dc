// The live overview: connections, who is online, the boards and the publishes of the last
// minute, from admin.stats every few seconds while the page is open.

import {h} from '../core/dom.js';
import {t} from '../core/i18n.js';
import {clock} from '../core/format.js';

const TYPES = ['express', 'purchase', 'bounty', 'group'];

export function overviewView(s) {
    const o = s.overview.stats;
    const value = (pick) => (o ? String(pick(o)) : '…');
    return h('section', {class: 'overview'},
        h('div', {class: 'figures'},
            figure(t('admin.publishesPerMinute'), value((x) => x.published_last_minute), 'figure-publishes'),
            figure(t('admin.openOrders'), value((x) => TYPES.reduce((sum, type) => sum + x.types[type].open, 0)), 'figure-open'),
            figure(t('admin.usersOnline'), value((x) => x.users_online), 'figure-users'),
            figure(t('admin.connections'), value((x) => x.connections), 'figure-connections'),
            figure(t('admin.pendingCount'), value((x) => x.pending_verifications), 'figure-pending')),
        h('table', {class: 'table', id: 'overview-table'},
            h('thead', h('tr', h('th', t('admin.type')), h('th', t('admin.openOrders')), h('th', t('admin.runnersOnline')),
                h('th', t('admin.publishesPerMinute')))),
            h('tbody', TYPES.map((type) => h('tr', {'data-type': type},
                h('th', t(`type.${type}`)),
                h('td', value((x) => x.types[type].open)),
                h('td', value((x) => x.types[type].runners_online)),
                h('td', value((x) => x.types[type].published_last_minute)))))),
        h('p', {class: 'hint'}, s.overview.updatedAt ? t('admin.updatedAt', {time: clock(s.overview.updatedAt)}) : t('common.loading')));
}

function figure(label, value, id) {
    return h('div', {class: 'figure card', id},
        h('span', {class: 'figure-value'}, value), h('span', {class: 'figure-label'}, label));
}
