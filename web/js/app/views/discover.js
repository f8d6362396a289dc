// 发现 Discover: one tab per type, the live board (enter / update / leave without a reload),
// filters, refresh, runners online, and accept — for verified runners; others see the way to
// verification. Group orders are joined, by anyone.

import {h, icon} from '../../core/dom.js';
import {say, t} from '../../core/i18n.js';
import {ICONS, tabs} from '../../ui/components.js';
import {cardFacts, orderTitle, rewardText, typeLabel} from '../order-text.js';
import {ORDER_TYPES} from '../state.js';

function sorted(items, sort) {
    const list = [...items.values()];
    const byId = (a, b) => b.id - a.id;
    if (sort === 'tip') return list.sort((a, b) => b.tip - a.tip || byId(a, b));
    if (sort === 'deadline') return list.sort((a, b) => a.deadline - b.deadline || byId(a, b));
    return list.sort((a, b) => b.created_at - a.created_at || byId(a, b));
}

export function discoverView(s, ctx) {
    const board = s.board;
    const type = board.type;
    const user = s.auth.user;
    const verified = Boolean(user?.is_verified_runner);
    const stats = s.stats?.[type];
    const busy = s.forms.accept?.busy;
    const orders = sorted(board.items, board.filter.sort);
    return h('main', {class: 'screen discover'},
        h('h1', {class: 'screen-title'}, t('discover.title')),
        tabs(ORDER_TYPES.map((key) => ({key, label: t(`type.${key}`), href: `#/discover/${key}`})), type,
            {idPrefix: 'discover-type', className: 'tabs types'}),
        h('div', {class: 'board-stats', id: 'board-stats'},
            h('span', {id: 'board-total'}, t('discover.open', {n: board.total})),
            stats && type !== 'group' && h('span', {id: 'runners-online'}, t('discover.runnersOnline', {n: stats.runners_online})),
            h('button', {type: 'button', class: 'button small secondary', id: 'discover-refresh', onClick: () => ctx.board.refresh()},
                icon(ICONS.refresh), h('span', t('discover.refresh')))),
        type !== 'group' && !verified && verificationBanner(user),
        filters(s, ctx),
        board.notice && h('p', {class: ['notice', `notice-${board.notice.kind}`], id: 'discover-notice', role: 'alert'}, say(board.notice.text)),
        board.loading && orders.length === 0 ? h('p', {class: 'empty'}, t('common.loading'))
            : orders.length === 0 ? h('p', {class: 'empty', id: 'board-empty'}, t('discover.empty'))
            : h('ul', {class: 'cards', id: 'board-list'}, orders.map((order) => h('li', card(order, user, verified, busy, ctx)))));
}

function verificationBanner(user) {
    const pending = user?.verification?.status === 'pending';
    return h('div', {class: 'banner', id: 'discover-verify'},
        h('p', t(pending ? 'discover.verifyPending' : 'discover.verifyFirst')),
        !pending && h('a', {class: 'button small primary', href: '#/me/verify', id: 'discover-verify-link'}, t('discover.verifyNow')));
}

function filters(s, ctx) {
    const filter = s.board.filter;
    const campuses = s.info?.campuses || [];
    const set = (key) => (event) => ctx.board.setFilter({[key]: event.target.value});
    const remember = (key) => (event) => ctx.store.quietly((st) => { st.board.filter[key] = event.target.value; });
    const onSubmit = (event) => { event.preventDefault(); ctx.board.setFilter({}); };
    return h('form', {class: 'filters', id: 'discover-filter', onSubmit, role: 'search'},
        campuses.length > 0
            ? h('select', {id: 'filter-campus', 'aria-label': t('field.campus'), onChange: set('campus')},
                h('option', {value: '', selected: !filter.campus}, t('discover.allCampuses')),
                campuses.map((c) => h('option', {value: c, selected: c === filter.campus}, c)))
            : h('input', {id: 'filter-campus', 'aria-label': t('field.campus'), placeholder: t('field.campus'), value: filter.campus,
                maxlength: 60, onInput: remember('campus'), onChange: set('campus')}),
        h('select', {id: 'filter-sort', 'aria-label': t('discover.sort'), onChange: set('sort')},
            ['newest', 'tip', 'deadline'].map((key) => h('option', {value: key, selected: filter.sort === key}, t(`sort.${key}`)))),
        h('input', {id: 'filter-keyword', type: 'search', 'aria-label': t('discover.keyword'), placeholder: t('discover.keyword'),
            value: filter.keyword, maxlength: 60, onInput: remember('keyword'), onChange: set('keyword')}),
        h('input', {id: 'filter-min-tip', inputmode: 'decimal', 'aria-label': t('discover.minTip'), placeholder: t('discover.minTip'),
            value: filter.min_tip, onInput: remember('min_tip'), onChange: set('min_tip')}));
}

function card(order, user, verified, busy, ctx) {
    const isMine = user && order.publisher === user.id;
    let action;
    if (isMine) {
        action = h('span', {class: 'badge'}, t('card.mine'));
    } else if (order.type === 'group') {
        action = h('button', {type: 'button', class: 'button primary small join', 'data-order-id': order.id, disabled: busy,
            onClick: () => ctx.actions.joinFromBoard(order.id)}, t('action.join'));
    } else if (verified) {
        action = h('button', {type: 'button', class: 'button primary small accept', 'data-order-id': order.id, disabled: busy,
            onClick: () => ctx.actions.acceptFromBoard(order.id)}, t('action.accept'));
    } else {
        action = h('a', {class: 'button small secondary', href: '#/me/verify'}, t('card.verifyToAccept'));
    }
    return h('article', {class: 'order-card', 'data-order-id': order.id, 'data-revision': order.revision},
        h('a', {class: 'card-main', href: `#/order/${order.id}`},
            h('div', {class: 'card-top'},
                h('span', {class: ['type-chip', `type-${order.type}`]}, typeLabel(order.type)),
                h('span', {class: 'reward'}, rewardText(order))),
            h('h2', {class: 'card-title'}, orderTitle(order)),
            h('p', {class: 'card-facts'}, cardFacts(order).join(' · '))),
        h('div', {class: 'card-actions'}, action));
}
