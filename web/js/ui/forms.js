// Form state kept in the store: what was typed (drafts), whether a request is in flight, and
// the errors to show, each at the field the server (or the page's own check) named.

import {ProtocolError} from '../core/client.js';
import {has, t} from '../core/i18n.js';
import {invalidFieldText} from './error-words.js';

export function formState(s, name) {
    return s.forms[name] || (s.forms[name] = {errors: {}, error: null, notice: null, busy: false});
}

export function draft(s, name) {
    return s.drafts[name] || (s.drafts[name] = {});
}

/** An error found before asking the server, shown at `field`. */
export function fieldError(field, key, params) {
    const error = new ProtocolError({code: 'invalid_field', field, message: t(key, params)});
    error.isLocal = true;
    return error;
}

/** Several errors found before asking the server, each shown at its field (`{field: string key}`). */
export class FieldErrors extends Error {
    constructor(keys) {
        super('invalid fields');
        this.errors = Object.fromEntries(Object.entries(keys).map(([field, key]) => [field, t(key)]));
    }
}

/** The words to show for an error reply (or a failed connection). */
export function errorText(error) {
    if (!(error instanceof ProtocolError)) return t('err.internal_error');
    if (error.isLocal) return error.message;
    if (error.code === 'rate_limited' && error.retryAfterMs !== null) {
        return t('err.rate_limited_for', {s: Math.max(1, Math.ceil(error.retryAfterMs / 1000))});
    }
    if (error.code === 'invalid_field') return invalidFieldText(error);
    if (has(`err.${error.code}`)) return t(`err.${error.code}`);
    // A code newer than this page: its own words, never the server's English message.
    return t('err.other');
}

/**
 * Runs `task` as the form's submission. An error whose field the form shows (`shows(field)`)
 * goes next to that field, and so does an error whose code `fieldOfCode` maps to a field (a
 * wrong delivery code has no `field`, but belongs at the code); any other error goes at the top.
 */
export async function submit(store, name, task, shows = () => true, fieldOfCode = {}) {
    if (formState(store.state, name).busy) return undefined;
    store.update((s) => Object.assign(formState(s, name), {busy: true, errors: {}, error: null, notice: null}));
    try {
        const result = await task();
        store.update((s) => { formState(s, name).busy = false; });
        return result;
    } catch (error) {
        store.update((s) => {
            const form = formState(s, name);
            form.busy = false;
            form.code = error.code || null;
            if (error instanceof FieldErrors) Object.assign(form.errors, error.errors);
            else if (error instanceof ProtocolError && fieldOfCode[error.code]) form.errors[fieldOfCode[error.code]] = errorText(error);
            else if (error instanceof ProtocolError && error.field && shows(error.field)) form.errors[error.field] = errorText(error);
            else form.error = errorText(error);
        });
        if (!(error instanceof ProtocolError) && !(error instanceof FieldErrors)) console.error(error);
        return undefined;
    }
}

export function setNotice(store, name, notice) {
    store.update((s) => { formState(s, name).notice = notice; });
}

export function clearForm(store, name) {
    store.update((s) => { delete s.forms[name]; delete s.drafts[name]; });
}
