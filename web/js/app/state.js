// The shape of the app's store. Everything a screen shows is read from here.

export const ORDER_TYPES = ['express', 'purchase', 'bounty', 'group'];
export const FINAL_STATUSES = new Set(['completed', 'cancelled', 'expired']);

export function emptyAccount() {
    return {
        orders: {},          // id → order as I may see it (replies, order.changed, order.get)
        mine: {published: new Set(), accepted: new Set(), joined: new Set(), cursors: {}, loaded: false},
        users: {},           // id → public profile of the other party
        sessions: null,      // auth.sessions
        earnings: null,      // runner.earnings
    };
}

export function initialState() {
    return {
        conn: {state: 'idle', retryAt: null},
        info: null,
        auth: {status: 'unknown', user: null, notice: null},
        route: {name: 'discover', params: {}},
        board: {
            type: 'express',
            filter: {campus: '', min_tip: '', keyword: '', sort: 'newest'},
            items: new Map(),  // id → anonymous view, exactly the open orders matching the filter
            seq: 0, total: 0, subscribed: false, loading: false, notice: null,
        },
        stats: null,         // board.stats
        forms: {},           // form name → {errors: {field: text}, error, notice, busy}
        drafts: {},          // form name → {field: value}, what the user typed so far
        toasts: [],
        devCode: null,       // {phone, code, purpose}: the code a --dev server returned
        codeWait: {},        // purpose → time until which "send code" is disabled
        ...emptyAccount(),
    };
}
