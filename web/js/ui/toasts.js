// The page's one passing notice: a short message under the top bar that goes away by itself.
// A newer one replaces the one showing (what it said stays in the order's timeline), so notices
// never pile up over the page, and the bar it sits in is part of the sticky header: it pushes
// the page down instead of covering its controls.

const NOTICE_MS = 4500;
let nextNotice = 1;

export function toast(store, text, kind = 'info', link = null) {
    const id = nextNotice++;
    store.update((s) => { s.toasts = [{id, text, kind, link}]; });
    setTimeout(() => store.update((s) => { s.toasts = s.toasts.filter((item) => item.id !== id); }), NOTICE_MS);
}
