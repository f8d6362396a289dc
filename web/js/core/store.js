// The single source of what the page shows. The protocol client and the user's actions change
// it through `update`; rendering only reads it. Changes are batched: one render per task turn
// however many events arrived in it.

export function createStore(initial) {
    const state = initial;
    const listeners = new Set();
    let scheduled = false;
    let held = 0;

    function notify() {
        scheduled = false;
        if (held > 0) { scheduled = true; return; }
        for (const listener of listeners) listener(state);
    }

    function schedule() {
        if (scheduled) return;
        scheduled = true;
        setTimeout(notify, 0);
    }

    return {
        get state() { return state; },
        /** Mutates the state in `change(state)` and renders soon after. */
        update(change) {
            change(state);
            schedule();
        },
        /** Mutates without rendering: form drafts that the page already shows as typed. */
        quietly(change) { change(state); },
        subscribe(listener) { listeners.add(listener); return () => listeners.delete(listener); },
        /** Holds renders back (an input method composing Chinese text) until `release`. */
        hold() { held += 1; },
        release() { held = Math.max(0, held - 1); if (held === 0 && scheduled) { scheduled = false; schedule(); } },
    };
}
