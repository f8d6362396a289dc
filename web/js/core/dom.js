// Building DOM trees from plain calls, and bringing the page up to date with a new tree. Text
// always goes in as text nodes, never as HTML, so nothing a user typed (a nickname, an order's
// title) can become markup or script.
//
// Rendering builds a fresh tree from the store each time; `patch` then morphs the page into it:
// nodes of the same kind in the same place are kept and only their attributes, text and event
// handlers change. So a field being typed in, its caret, an input method's composition, the
// scroll position and any element a script holds stay what they are across live updates.

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(parent, child) {
    if (child === null || child === undefined || child === false || child === true) return;
    if (Array.isArray(child)) { for (const c of child) append(parent, c); return; }
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
}

// Handlers live in a table on the element behind one listener per event type, so a kept node
// can be handed the handlers of the tree that replaced it.
function dispatch(event) {
    const handler = this.handlers && this.handlers[event.type];
    if (handler) handler.call(this, event);
}

function listen(element, type) {
    if (!element.listening) element.listening = new Set();
    if (element.listening.has(type)) return;
    element.listening.add(type);
    element.addEventListener(type, dispatch);
}

function applyAttributes(element, attributes) {
    for (const [name, value] of Object.entries(attributes)) {
        if (value === null || value === undefined || value === false) continue;
        if (name.startsWith('on') && typeof value === 'function') {
            const type = name.slice(2).toLowerCase();
            if (!element.handlers) element.handlers = {};
            element.handlers[type] = value;
            listen(element, type);
        } else if (name === 'class') {
            element.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
        } else if (name === 'value' || name === 'checked' || name === 'selected') {
            element[name] = value;
        } else if (value === true) {
            element.setAttribute(name, '');
        } else {
            element.setAttribute(name, String(value));
        }
    }
}

/** `h('button', {class: 'primary', onClick: f}, 'OK')`: an element with attributes and children. */
export function h(tag, attributes = {}, ...children) {
    const element = document.createElement(tag);
    if (attributes && (attributes instanceof Node || Array.isArray(attributes) || typeof attributes !== 'object')) {
        children.unshift(attributes);
    } else if (attributes) {
        applyAttributes(element, attributes);
    }
    append(element, children);
    return element;
}

/** An SVG icon from path data (24×24 view box, drawn with the current colour). */
export function icon(paths, className = 'icon') {
    const svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('class', className);
    svg.setAttribute('aria-hidden', 'true');
    for (const d of [].concat(paths)) {
        const path = document.createElementNS(SVG_NS, 'path');
        path.setAttribute('d', d);
        svg.append(path);
    }
    return svg;
}

function sameKind(old, next) {
    if (old.nodeType !== next.nodeType || old.nodeName !== next.nodeName) return false;
    if (old.nodeType !== Node.ELEMENT_NODE) return true;
    return old.id === next.id && old.getAttribute('data-order-id') === next.getAttribute('data-order-id')
        && old.getAttribute('type') === next.getAttribute('type');
}

function morphAttributes(old, next) {
    for (const {name} of [...old.attributes]) if (!next.hasAttribute(name)) old.removeAttribute(name);
    for (const {name, value} of [...next.attributes]) if (old.getAttribute(name) !== value) old.setAttribute(name, value);
    old.handlers = next.handlers;
    for (const type of next.listening || []) listen(old, type);
}

function morph(old, next) {
    if (old.nodeType === Node.TEXT_NODE) {
        if (old.nodeValue !== next.nodeValue) old.nodeValue = next.nodeValue;
        return;
    }
    morphAttributes(old, next);
    morphChildren(old, next);
    // What the user can change: set only when it differs, so a caret is not moved for nothing.
    if ('value' in next && old.value !== next.value && old.nodeName !== 'BUTTON') old.value = next.value;
    if ('checked' in next && old.checked !== next.checked) old.checked = next.checked;
    if (old.nodeName === 'OPTION' && old.selected !== next.selected) old.selected = next.selected;
}

function morphChildren(old, next) {
    const current = [...old.childNodes];
    const wanted = [...next.childNodes];
    wanted.forEach((node, index) => {
        const existing = current[index];
        if (!existing) old.append(node);
        else if (sameKind(existing, node)) morph(existing, node);
        else existing.replaceWith(node);
    });
    for (let index = wanted.length; index < current.length; index++) current[index].remove();
}

/** Brings `root`'s children up to `children` (freshly built), keeping every node it can. */
export function patch(root, children) {
    const fresh = document.createElement(root.nodeName);
    fresh.append(...[].concat(children).filter(Boolean));
    morphChildren(root, fresh);
}
