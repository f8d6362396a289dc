// The app's entry point: one store, one session (the connection and the account), the board,
// the actions; the route from the location hash; and one render of the whole page from the
// store whenever it changes.

import {patch, h} from '../core/dom.js';
import {setLanguage, t} from '../core/i18n.js';
import {createStore} from '../core/store.js';
import {createActions} from './actions.js';
import {createBoard} from './board.js';
import {errorText, formState} from '../ui/forms.js';
import {parseRoute} from './router.js';
import {createSession} from './session.js';
import {initialState, ORDER_TYPES} from './state.js';
import {discoverView} from './views/discover.js';
import {findView} from './views/find.js';
import {loginView} from './views/login.js';
import {mePageView, meView} from './views/me.js';
import {orderView} from './views/order.js';
import {ordersView} from './views/orders.js';
import {plainTopBar, tabBar, topBar} from './views/shell.js';

const store = createStore(initialState());
const session = createSession(store);
const board = createBoard(session);
const actions = createActions(session, board);
const ctx = {
    store, session, board, actions,
    setLanguage(language) {
        setLanguage(language);
        document.title = t('app.name');
        store.update(() => {});
    },
};

const SCREENS = {
    find: findView,
    discover: discoverView,
    orders: ordersView,
    order: orderView,
    me: meView,
    'me-page': mePageView,
};

function screen(s) {
    if (s.auth.status === 'unknown') {
        return h('main', {class: 'screen splash'}, h('div', {class: 'logo big', 'aria-hidden': 'true'}, '帮'),
            h('p', t('common.loading')));
    }
    if (s.auth.status === 'out') return loginView(s, ctx);
    return (SCREENS[s.route.name] || discoverView)(s, ctx);
}

function render(s) {
    const loggedIn = s.auth.status === 'in';
    document.body.classList.toggle('with-tabbar', loggedIn);
    patch(document.getElementById('app'), [
        loggedIn ? topBar(s, ctx) : plainTopBar(s, ctx),
        screen(s),
        loggedIn && tabBar(s),
    ]);
}

/** What a screen needs when it comes up: the board subscription, an order, the devices. */
function enter(route) {
    const s = store.state;
    const loggedIn = s.auth.status === 'in';
    if (route.name === 'discover' && loggedIn) {
        const type = ORDER_TYPES.includes(route.params.type) ? route.params.type : s.board.type;
        board.open(type);
    } else {
        board.close();
    }
    board.watchStats(loggedIn && (route.name === 'discover' || route.name === 'find'));
    if (route.name === 'order' && loggedIn) {
        session.fetchOrder(route.params.id).catch((error) => {
            store.update((st) => { formState(st, `load-${route.params.id}`).error = errorText(error); });
        });
    }
    if (route.name === 'me' && loggedIn && s.auth.user?.is_verified_runner) actions.loadEarnings();
    if (route.name === 'me-page' && route.params.page === 'devices' && loggedIn) actions.loadSessions();
}

function onRoute() {
    const route = parseRoute(location.hash);
    const s = store.state;
    if (s.auth.status === 'in' && route.name === 'login') { location.hash = '#/discover'; return; }
    store.update((st) => { st.route = route; });
    enter(route);
    window.scrollTo(0, 0);
}

window.addEventListener('hashchange', onRoute);
session.onReady(() => {
    if (store.state.auth.status === 'in') enter(store.state.route);
    else if (location.hash !== '#/login') history.replaceState(null, '', '#/login');
});

// Times on screen (reconnect countdown, "resend in 42 s", deadlines) move on by themselves.
setInterval(() => {
    const s = store.state;
    const counting = s.conn.state === 'waiting' || Object.values(s.codeWait).some((until) => until > Date.now());
    if (counting) store.update(() => {});
}, 1000);
setInterval(() => store.update(() => {}), 30000);

// An input method composing Chinese text must not have its field rebuilt under it.
document.addEventListener('compositionstart', () => store.hold());
document.addEventListener('compositionend', () => store.release());

store.subscribe(render);
document.title = t('app.name');
store.update((st) => { st.route = parseRoute(location.hash); });
session.start();
