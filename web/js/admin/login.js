// The console's login: an administrator's phone with an SMS code, or the operator secret.

import {h} from '../core/dom.js';
import {say, t} from '../core/i18n.js';
import {devCodeNotice, field, formError, submitButton} from '../ui/components.js';
import {draft} from '../ui/forms.js';

export function loginView(s, ctx) {
    const {store, actions} = ctx;
    const mode = s.drafts.login?.mode === 'secret' ? 'secret' : 'phone';
    const setMode = (next) => (event) => { event.preventDefault(); store.update((st) => { draft(st, 'login').mode = next; }); };
    const phoneForm = 'admin-login-code';
    const secretForm = 'admin-login-secret';
    const values = (form) => draft(store.state, form);
    const left = s.codeWait.login ? Math.max(0, Math.ceil((s.codeWait.login - Date.now()) / 1000)) : 0;
    return h('main', {class: 'console-login'},
        h('div', {class: 'login-hero'}, h('div', {class: 'logo big', 'aria-hidden': 'true'}, '帮'), h('h1', t('admin.title'))),
        s.auth.notice && h('p', {class: 'form-error', id: 'admin-login-notice'}, say(s.auth.notice)),
        h('div', {class: 'card'},
            h('nav', {class: 'segmented', role: 'tablist'},
                h('a', {href: '#', id: 'admin-mode-phone', role: 'tab', class: mode === 'phone' ? 'active' : null, onClick: setMode('phone')}, t('admin.byPhone')),
                h('a', {href: '#', id: 'admin-mode-secret', role: 'tab', class: mode === 'secret' ? 'active' : null, onClick: setMode('secret')}, t('admin.bySecret'))),
            mode === 'phone'
                ? h('form', {id: phoneForm, class: 'form', novalidate: true, onSubmit: (event) => {
                    event.preventDefault();
                    actions.loginWithCode(values(phoneForm).phone || '', values(phoneForm).code || '');
                }},
                h('div', {class: 'field-with-button'},
                    field(store, phoneForm, 'phone', {label: t('admin.phone'), kind: 'tel', attrs: {inputmode: 'tel', maxlength: 32}}),
                    h('button', {type: 'button', class: 'button secondary', id: 'admin-send-code', disabled: left > 0,
                        onClick: () => actions.sendCode(values(phoneForm).phone || '')}, left > 0 ? t('login.resendIn', {s: left}) : t('login.sendCode'))),
                devCodeNotice(store, 'login', (code) => store.update((st) => { draft(st, phoneForm).code = code; })),
                field(store, phoneForm, 'code', {label: t('login.code'), attrs: {inputmode: 'numeric', maxlength: 16}}),
                h('p', {class: 'hint'}, t('admin.phoneHint')),
                formError(store, phoneForm),
                submitButton(store, phoneForm, t('login.submit'), t('login.submitting'), {id: 'admin-login-submit'}))
                : h('form', {id: secretForm, class: 'form', novalidate: true, onSubmit: (event) => {
                    event.preventDefault();
                    actions.loginWithSecret((values(secretForm).secret || '').trim());
                }},
                field(store, secretForm, 'secret', {label: t('admin.secret'), kind: 'password', attrs: {autocomplete: 'off', maxlength: 128}}),
                h('p', {class: 'hint'}, t('admin.secretHint')),
                h('pre', {class: 'command'}, 'cat ./data/admin-secret'),
                formError(store, secretForm),
                submitButton(store, secretForm, t('login.submit'), t('login.submitting'), {id: 'admin-secret-submit'}))),
        h('p', {class: 'footnote'}, h('a', {href: '/', class: 'tap'}, t('admin.toApp'))));
}
