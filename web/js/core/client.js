// The WebSocket connection to the server's `/ws` on the page's own origin, and nothing else:
// requests matched to replies by id, events handed on, and reconnection with exponential
// backoff and jitter: each wait is drawn between half and all of its ceiling, so a restarted
// server is not hit by every phone at the same instant.
//
// States: `connecting` → `open` → (closed) → `waiting` (a timer until the next attempt) →
// `connecting` … The owner (the session) logs the connection in from `onOpen` and calls
// `healthy()` once it did, which resets the backoff.

export class ProtocolError extends Error {
    constructor(error) {
        super(error.message || error.code);
        this.code = error.code;
        this.field = error.field;
        this.retryAfterMs = typeof error.retry_after_ms === 'number' ? error.retry_after_ms : null;
        this.min = typeof error.min === 'number' ? error.min : null;
        this.max = typeof error.max === 'number' ? error.max : null;
    }
}

const BACKOFF_FIRST_MS = 500;     // a blip on a mobile network heals within a second
const BACKOFF_MAX_MS = 15000;     // a phone should not wait longer than this for a restarted server
const REQUEST_TIMEOUT_MS = 15000; // a reply slower than this means the connection is dead

export function socketURL(path = '/ws') {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${location.host}${path}`;
}

export class ProtocolClient {
    constructor({url = socketURL(), onState = () => {}, onEvent = () => {}, onOpen = () => {}} = {}) {
        this.url = url;
        this.onState = onState;
        this.onEvent = onEvent;
        this.onOpen = onOpen;
        this.socket = null;
        this.pending = new Map();
        this.nextId = 1;
        this.attempt = 0;
        this.timer = null;
        this.state = 'idle';
        this.retryAt = null;
        window.addEventListener('online', () => this.retryNow());
    }

    start() { if (this.state === 'idle') this.connect(); }

    setState(state) {
        this.state = state;
        this.onState(state, this.retryAt);
    }

    connect() {
        clearTimeout(this.timer);
        this.timer = null;
        this.retryAt = null;
        this.setState('connecting');
        let socket;
        try {
            socket = new WebSocket(this.url);
        } catch {
            this.scheduleReconnect();
            return;
        }
        this.socket = socket;
        socket.addEventListener('open', () => {
            if (socket !== this.socket) return;
            this.setState('open');
            this.onOpen();
        });
        socket.addEventListener('message', (message) => {
            if (socket === this.socket) this.receive(message.data);
        });
        socket.addEventListener('close', () => {
            if (socket !== this.socket) return;
            this.socket = null;
            this.failPending();
            this.scheduleReconnect();
        });
    }

    receive(text) {
        let message;
        try { message = JSON.parse(text); } catch { return; }
        if (!message || typeof message !== 'object') return;
        if (typeof message.event === 'string') {
            this.onEvent(message);
            return;
        }
        const waiting = this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id);
        clearTimeout(waiting.timer);
        if (message.ok) waiting.resolve(message.data ?? {});
        else waiting.reject(new ProtocolError(message.error || {code: 'internal_error'}));
    }

    /** Sends one request; resolves with the reply's `data`, rejects with a ProtocolError. */
    request(op, data) {
        if (!this.socket || this.state !== 'open') {
            return Promise.reject(new ProtocolError({code: 'offline', message: 'not connected'}));
        }
        const id = this.nextId++;
        const message = data === undefined ? {id, op} : {id, op, data};
        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                this.pending.delete(id);
                reject(new ProtocolError({code: 'timeout', message: 'no reply'}));
                // A connection that stopped answering is replaced.
                if (this.socket) this.socket.close();
            }, REQUEST_TIMEOUT_MS);
            this.pending.set(id, {resolve, reject, timer});
            this.socket.send(JSON.stringify(message));
        });
    }

    failPending() {
        for (const waiting of this.pending.values()) {
            clearTimeout(waiting.timer);
            waiting.reject(new ProtocolError({code: 'offline', message: 'connection lost'}));
        }
        this.pending.clear();
    }

    scheduleReconnect() {
        const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.attempt);
        const delay = Math.round(ceiling / 2 + Math.random() * ceiling / 2);
        this.attempt += 1;
        this.retryAt = Date.now() + delay;
        this.setState('waiting');
        this.timer = setTimeout(() => this.connect(), delay);
    }

    /** The connection is logged in and working: the next failure starts the backoff afresh. */
    healthy() { this.attempt = 0; }

    /** Skips the wait (the user tapped "retry", or the browser came back online). */
    retryNow() {
        if (this.state === 'waiting') this.connect();
    }

    /** Closes the current socket on purpose; the usual reconnection follows. */
    drop() { if (this.socket) this.socket.close(); }
}
