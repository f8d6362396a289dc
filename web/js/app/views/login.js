// 登录 Login: phone + SMS code (an unknown phone registers on the spot) or phone + password.

import {h} from '../../core/dom.js';
import {say, t} from '../../core/i18n.js';
import {phone as formatPhone} from '../../core/format.js';
import {devCodeNotice, field, formError, submitButton, tabs} from '../../ui/components.js';
import {draft} from '../../ui/forms.js';

export function loginView(s, ctx) {
    const mode = s.drafts.login?.mode === 'password' ? 'password' : 'code';
    const {store} = ctx;
    const setMode = (next) => (event) => { event.preventDefault(); store.update((st) => { draft(st, 'login').mode = next; }); };
    return h('main', {class: 'screen login'},
        h('div', {class: 'login-hero'},
            h('div', {class: 'logo big', 'aria-hidden': 'true'}, '帮'),
            h('h1', t('app.name')),
            h('p', {class: 'tagline'}, t('app.tagline'))),
        s.auth.notice && h('p', {class: 'form-notice', role: 'status', id: 'login-notice'}, say(s.auth.notice)),
        h('div', {class: 'card'},
            h('nav', {class: 'segmented', role: 'tablist'},
                h('a', {href: '#/login', id: 'login-mode-code', role: 'tab', class: mode === 'code' ? 'active' : null,
                    'aria-selected': String(mode === 'code'), onClick: setMode('code')}, t('login.byCode')),
                h('a', {href: '#/login', id: 'login-mode-password', role: 'tab', class: mode === 'password' ? 'active' : null,
                    'aria-selected': String(mode === 'password'), onClick: setMode('password')}, t('login.byPassword'))),
            mode === 'code' ? codeForm(s, ctx) : passwordForm(s, ctx)),
        h('p', {class: 'footnote'},
            s.info?.support_phone && [t('me.support'), ': ', h('a', {href: `tel:${s.info.support_phone}`, id: 'login-support', class: 'tap'}, formatPhone(s.info.support_phone)), ' · '],
            s.info && t('app.version', {version: s.info.version})));
}

function codeWaitLeft(s, purpose) {
    const until = s.codeWait[purpose];
    return until ? Math.max(0, Math.ceil((until - Date.now()) / 1000)) : 0;
}

export function sendCodeButton(s, onClick, purpose, id) {
    const left = codeWaitLeft(s, purpose);
    return h('button', {type: 'button', class: 'button secondary', id, disabled: left > 0, onClick},
        left > 0 ? t('login.resendIn', {s: left}) : t('login.sendCode'));
}

function codeForm(s, ctx) {
    const {store, actions} = ctx;
    const form = 'login-code';
    const values = () => draft(store.state, form);
    const onSubmit = (event) => {
        event.preventDefault();
        actions.loginWithCode(values().phone || '', values().code || '');
    };
    return h('form', {id: form, novalidate: true, onSubmit},
        h('div', {class: 'field-with-button'},
            field(store, form, 'phone', {label: t('login.phone'), kind: 'tel',
                attrs: {inputmode: 'tel', autocomplete: 'tel', placeholder: t('login.phonePlaceholder'), maxlength: 32}}),
            sendCodeButton(s, () => actions.sendLoginCode(values().phone || ''), 'login', 'login-send-code')),
        devCodeNotice(store, 'login', (code) => store.update((st) => { draft(st, form).code = code; })),
        field(store, form, 'code', {label: t('login.code'), hint: t('login.codeHint'),
            attrs: {inputmode: 'numeric', autocomplete: 'one-time-code', maxlength: 16, placeholder: t('login.codePlaceholder')}}),
        formError(store, form),
        submitButton(store, form, t('login.submit'), t('login.submitting'), {id: 'login-submit'}));
}

function passwordForm(s, ctx) {
    const {store, actions} = ctx;
    const form = 'login-password';
    const onSubmit = (event) => {
        event.preventDefault();
        const values = draft(store.state, form);
        actions.loginWithPassword(values.phone || '', values.password || '');
    };
    return h('form', {id: form, novalidate: true, onSubmit},
        field(store, form, 'phone', {label: t('login.phone'), kind: 'tel',
            attrs: {inputmode: 'tel', autocomplete: 'tel', placeholder: t('login.phonePlaceholder'), maxlength: 32}}),
        field(store, form, 'password', {label: t('login.password'), kind: 'password', hint: t('login.passwordHint'),
            attrs: {autocomplete: 'current-password', maxlength: 128}}),
        formError(store, form),
        submitButton(store, form, t('login.submit'), t('login.submitting'), {id: 'login-password-submit'}));
}
