// Building DOM trees from plain calls. Text always goes in as text nodes, never as HTML, so
// nothing a user typed (a nickname, an order's title) can become markup or script.

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(parent, child) {
    if (child === null || child === undefined || child === false || child === true) return;
    if (Array.isArray(child)) { for (const c of child) append(parent, c); return; }
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
}

function applyAttributes(element, attributes) {
    for (const [name, value] of Object.entries(attributes)) {
        if (value === null || value === undefined || value === false) continue;
        if (name.startsWith('on') && typeof value === 'function') {
            element.addEventListener(name.slice(2).toLowerCase(), value);
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

/**
 * Replaces `root`'s children with `children`, keeping the focused field, its caret and the
 * window's scroll position, so a live update never interrupts someone typing.
 */
export function patch(root, children) {
    const active = document.activeElement;
    const focusId = active && active.id && root.contains(active) ? active.id : null;
    let selection = null;
    if (focusId) {
        try { selection = [active.selectionStart, active.selectionEnd]; } catch { selection = null; }
    }
    const scroll = window.scrollY;
    root.replaceChildren(...[].concat(children).filter(Boolean));
    if (focusId) {
        const again = document.getElementById(focusId);
        if (again) {
            again.focus({preventScroll: true});
            if (selection && selection[0] !== null) {
                try { again.setSelectionRange(selection[0], selection[1]); } catch { /* not a text field */ }
            }
        }
    }
    if (window.scrollY !== scroll) window.scrollTo(0, scroll);
}
