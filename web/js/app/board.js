// The Discover board: one subscription per connection (the type shown and its filter), kept
// exactly equal to the server's open orders by feed.enter / feed.update / feed.leave, and
// renewed after every reconnect (the feed is not replayed). Also the runners-online figures of
// board.stats, refreshed while Find or Discover is on screen.

import {parseYuan} from '../core/format.js';
import {message} from '../core/i18n.js';

const STATS_EVERY_MS = 15000;

export function createBoard(session) {
    const store = session.store;
    let watching = false;       // Discover is on screen
    let generation = 0;         // the subscribe whose reply counts; older replies are dropped
    let buffered = null;        // feed events that arrived while a subscribe was in flight
    let statsTimer = null;

    session.onFeed(receive);
    session.onReady(() => {
        if (watching) subscribe();
        if (statsTimer) refreshStats();
    });

    function filterRequest() {
        const {type, filter} = store.state.board;
        const request = {types: [type], sort: filter.sort || 'newest', limit: 100};
        if (filter.campus) request.campus = filter.campus;
        if (filter.keyword.trim()) request.keyword = filter.keyword.trim();
        if (String(filter.min_tip).trim()) {
            const fen = parseYuan(filter.min_tip);
            if (fen === null) return null;
            request.min_tip = fen;
        }
        return request;
    }

    async function subscribe() {
        const request = filterRequest();
        if (!request) {
            store.update((s) => { s.board.notice = {kind: 'error', text: message('discover.badMinTip')}; });
            return;
        }
        const mine = ++generation;
        buffered = [];
        store.update((s) => { s.board.loading = true; });
        try {
            const reply = await session.call('board.subscribe', request);
            if (mine !== generation) return;
            const seq = reply.seq[request.types[0]] ?? 0;
            const early = buffered;
            buffered = null;
            store.update((s) => {
                s.board.items = new Map(reply.orders.map((order) => [order.id, order]));
                s.board.total = reply.total;
                s.board.seq = seq;
                s.board.subscribed = true;
                s.board.loading = false;
                for (const event of early) apply(s, event);
            });
        } catch (error) {
            if (mine !== generation) return;
            buffered = null;
            store.update((s) => { s.board.loading = false; s.board.subscribed = false; });
        }
    }

    function receive(event) {
        if (!watching) return;
        if (buffered) { buffered.push(event); return; }
        store.update((s) => apply(s, event));
    }

    function apply(s, event) {
        const board = s.board;
        if (event.type !== board.type || event.seq <= board.seq) return;
        board.seq = event.seq;
        const data = event.data || {};
        if (event.event === 'feed.enter' || event.event === 'feed.update') {
            const known = board.items.get(data.order.id);
            if (!known && event.event === 'feed.enter') board.total += 1;
            if (!known || known.revision <= data.order.revision) board.items.set(data.order.id, data.order);
        } else if (event.event === 'feed.leave') {
            board.items.delete(data.order_id);
            board.total = Math.max(0, board.total - 1);
        }
    }

    async function refreshStats() {
        try {
            const reply = await session.call('board.stats');
            store.update((s) => { s.stats = reply.types; });
        } catch { /* the figure stays as it was */ }
    }

    return {
        /** Discover came on screen (or its type changed). */
        open(type) {
            const changed = store.state.board.type !== type;
            if (changed) {
                store.update((s) => {
                    s.board.type = type;
                    s.board.items = new Map();
                    s.board.notice = null;
                    s.board.subscribed = false;
                });
            }
            if (!watching || changed) {
                watching = true;
                subscribe();
            }
        },
        close() {
            if (!watching) return;
            watching = false;
            generation += 1;
            buffered = null;
            store.update((s) => { s.board.subscribed = false; });
            session.call('board.unsubscribe').catch(() => {});
        },
        setFilter(change) {
            store.update((s) => { Object.assign(s.board.filter, change); s.board.notice = null; });
            if (watching) subscribe();
        },
        refresh() {
            store.update((s) => { s.board.notice = null; });
            subscribe();
            refreshStats();
        },
        watchStats(on) {
            if (on && !statsTimer) {
                refreshStats();
                statsTimer = setInterval(refreshStats, STATS_EVERY_MS);
            } else if (!on && statsTimer) {
                clearInterval(statsTimer);
                statsTimer = null;
            }
        },
        refreshStats,
    };
}
