// Short messages at the top of the screen that go away by themselves.

const TOAST_MS = 4500;
let nextToast = 1;

export function toast(store, text, kind = 'info', link = null) {
    const id = nextToast++;
    store.update((s) => {
        s.toasts = [...s.toasts.slice(-2), {id, text, kind, link}];
    });
    setTimeout(() => store.update((s) => { s.toasts = s.toasts.filter((item) => item.id !== id); }), TOAST_MS);
}
