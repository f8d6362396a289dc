// Screens are addressed by the location hash (`#/order/42`), so reload and the back button work
// and no server route is needed beyond the one page.

const ROUTES = [
    [/^#\/login$/, 'login'],
    [/^#\/find(?:\/(\w+))?$/, 'find', ['type']],
    [/^#\/discover(?:\/(\w+))?$/, 'discover', ['type']],
    [/^#\/orders(?:\/(\w+))?$/, 'orders', ['tab']],
    [/^#\/order\/(\d+)$/, 'order', ['id']],
    [/^#\/me$/, 'me'],
    [/^#\/me\/(\w+)$/, 'me-page', ['page']],
];

export function parseRoute(hash) {
    for (const [pattern, name, keys = []] of ROUTES) {
        const match = pattern.exec(hash);
        if (!match) continue;
        const params = {};
        keys.forEach((key, index) => { if (match[index + 1] !== undefined) params[key] = match[index + 1]; });
        if (params.id) params.id = Number(params.id);
        return {name, params};
    }
    return {name: 'discover', params: {}};
}

export function navigate(hash) {
    if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
    else location.hash = hash;
}
