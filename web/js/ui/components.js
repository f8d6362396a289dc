// Pieces several screens share: form fields with their hint and error, tabs, badges, the
// development-code notice. Each takes what it shows as arguments and reads nothing else.

import {h, icon} from '../core/dom.js';
import {say, t} from '../core/i18n.js';
import {phone as formatPhone} from '../core/format.js';
import {draft, formState} from './forms.js';

export const ICONS = {
    find: ['M12 5v14M5 12h14'],
    discover: ['M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z', 'M15.5 8.5l-2 5-5 2 2-5z'],
    orders: ['M6 3h12v18H6z', 'M9 8h6M9 12h6M9 16h4'],
    me: ['M12 12a4 4 0 1 0 0-8a4 4 0 1 0 0 8z', 'M4 21c0-4 4-6 8-6s8 2 8 6'],
    back: ['M15 5l-7 7 7 7'],
    chevron: ['M9 6l6 6-6 6'],
    phone: ['M6 3h4l2 5-3 2a11 11 0 0 0 5 5l2-3 5 2v4a2 2 0 0 1-2 2A17 17 0 0 1 4 5a2 2 0 0 1 2-2z'],
    refresh: ['M20 11a8 8 0 1 0-2.3 5.7', 'M20 4v7h-7'],
};

export function fieldId(form, name) {
    return `${form}--${name.replace(/[^\w-]/g, '-')}`;
}

/**
 * A labelled input bound to the form's draft. `kind` is an input type, `textarea` or `select`
 * (with `options` as [value, label] pairs).
 */
export function field(store, form, name, {label, hint, kind = 'text', options = [], fallback = '', required = false,
    attrs = {}, onChange = null} = {}) {
    const s = store.state;
    const values = draft(s, form);
    const state = formState(s, form);
    const id = fieldId(form, name);
    // A default shown is a default submitted: it goes into the draft as if typed.
    if (!(name in values) && fallback !== '' && fallback !== undefined) values[name] = fallback;
    const value = name in values ? values[name] : fallback;
    const error = state.errors[name];
    const describedBy = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || null;
    const remember = (event) => {
        const target = event.target;
        const next = target.type === 'checkbox' ? target.checked : target.value;
        store.quietly((st) => { draft(st, form)[name] = next; });
        if (onChange) onChange(next);
    };
    const common = {id, name, 'aria-describedby': describedBy, 'aria-invalid': error ? 'true' : null, ...attrs};
    let control;
    if (kind === 'textarea') {
        control = h('textarea', {...common, rows: attrs.rows || 3, value, onInput: remember, onChange: remember});
    } else if (kind === 'select') {
        control = h('select', {...common, onChange: remember},
            options.map(([optionValue, optionLabel]) => h('option', {value: optionValue, selected: optionValue === value}, optionLabel)));
    } else if (kind === 'checkbox') {
        return h('div', {class: ['field', 'field-check', error && 'has-error']},
            h('label', {for: id}, h('input', {...common, type: 'checkbox', checked: Boolean(value), onChange: remember}), h('span', label)),
            hint && h('p', {class: 'hint', id: `${id}-hint`}, hint),
            error && h('p', {class: 'field-error', id: `${id}-error`, role: 'alert'}, error));
    } else {
        control = h('input', {...common, type: kind, value, onInput: remember, onChange: remember});
    }
    return h('div', {class: ['field', error && 'has-error']},
        h('label', {for: id}, label, required && h('span', {class: 'required', 'aria-hidden': 'true'}, ' *')),
        control,
        hint && h('p', {class: 'hint', id: `${id}-hint`}, hint),
        error && h('p', {class: 'field-error', id: `${id}-error`, role: 'alert'}, error));
}

/** The campus: a list when the deployment names its campuses, free text otherwise. */
export function campusField(store, form, name, {label, hint, fallback = ''} = {}) {
    const campuses = store.state.info?.campuses || [];
    if (campuses.length > 0) {
        const chosen = fallback && campuses.includes(fallback) ? fallback : campuses[0];
        return field(store, form, name, {label, hint, kind: 'select', required: true, fallback: chosen,
            options: campuses.map((c) => [c, c])});
    }
    return field(store, form, name, {label, hint, required: true, fallback, attrs: {maxlength: 60}});
}

export function formError(store, form) {
    const state = formState(store.state, form);
    return [
        state.error && h('p', {class: 'form-error', role: 'alert', id: `${form}--error`}, state.error),
        state.notice && h('p', {class: 'form-notice', role: 'status', id: `${form}--notice`}, say(state.notice)),
    ];
}

export function submitButton(store, form, label, busyLabel, attrs = {}) {
    const busy = formState(store.state, form).busy;
    return h('button', {type: 'submit', class: 'button primary block', disabled: busy, 'aria-busy': busy ? 'true' : null, ...attrs},
        busy ? busyLabel : label);
}

/** A row of tabs; `items` are {key, label, href} and `current` the selected key. */
export function tabs(items, current, {idPrefix, className = 'tabs'} = {}) {
    return h('nav', {class: className, role: 'tablist'},
        items.map((item) => h('a', {
            href: item.href, role: 'tab', id: idPrefix ? `${idPrefix}-${item.key}` : null,
            'aria-selected': item.key === current ? 'true' : 'false', class: item.key === current ? 'active' : null,
        }, item.label, item.count ? h('span', {class: 'count'}, String(item.count)) : null)));
}

export function backLink(href, label = t('common.back')) {
    return h('a', {class: 'back', href, id: 'back-link'}, icon(ICONS.back), h('span', label));
}

/** What a development server returned instead of sending an SMS. */
export function devCodeNotice(store, purpose, onFill) {
    const dev = store.state.devCode;
    if (!dev || dev.purpose !== purpose) return null;
    return h('div', {class: 'dev-code', id: 'dev-code-notice', role: 'status'},
        h('p', h('strong', t('dev.title')), ' ', t('dev.explain', {phone: formatPhone(dev.phone)})),
        h('p', {class: 'dev-code-row'},
            h('span', {class: 'dev-code-value', id: 'dev-code'}, dev.code),
            h('button', {type: 'button', class: 'button small', id: 'dev-code-fill', onClick: () => onFill(dev.code)}, t('dev.fill'))));
}

export function pageHeader(title, {back = null, extra = null} = {}) {
    return h('div', {class: 'page-header'}, back && backLink(back), h('h1', title), extra);
}

export function empty(text) {
    return h('p', {class: 'empty'}, text);
}
