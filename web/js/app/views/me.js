// 个人中心 Me: the profile, and one page each for editing it, the bound phone, the password,
// runner verification (its status changes live), feedback and the logged-in devices; the
// support phone as a tel: link; log out.

import {h, icon} from '../../core/dom.js';
import {currentLanguage, t} from '../../core/i18n.js';
import {dateTime, phone as formatPhone, yuan} from '../../core/format.js';
import {ICONS, campusField, devCodeNotice, field, formError, pageHeader, submitButton} from '../../ui/components.js';
import {draft, formState} from '../../ui/forms.js';
import {sendCodeButton} from './login.js';

function verificationStatus(user) {
    if (user.is_verified_runner) return 'approved';
    return user.verification?.status || 'none';
}

export function meView(s, ctx) {
    const user = s.auth.user;
    const status = verificationStatus(user);
    const item = (href, id, label, value = null) => h('li', h('a', {href, id, class: 'menu-item'},
        h('span', label), h('span', {class: 'menu-value'}, value, icon(ICONS.chevron))));
    return h('main', {class: 'screen me'},
        h('h1', {class: 'screen-title'}, t('me.title')),
        h('section', {class: 'card profile-card', id: 'profile-card'},
            h('div', {class: 'avatar', 'aria-hidden': 'true'}, (user.nickname || '?').slice(0, 1)),
            h('div', {class: 'profile-text'},
                h('p', {class: 'nickname', id: 'me-nickname'}, user.nickname),
                h('p', {class: 'muted', id: 'me-phone'}, formatPhone(user.phone)),
                h('p', {class: 'badges'},
                    user.is_verified_runner && h('span', {class: 'badge ok', id: 'me-runner-badge'}, t('me.verified')),
                    user.is_administrator && h('a', {class: 'tap', href: '/admin/', id: 'me-admin-link'}, h('span', {class: 'badge'}, t('me.administrator'))),
                    user.campus && h('span', {class: 'badge'}, user.campus)))),
        user.is_verified_runner && earnings(s, ctx),
        h('ul', {class: 'menu card'},
            item('#/me/profile', 'me-edit-profile', t('me.editProfile')),
            item('#/me/verify', 'me-verify', t('me.verification'),
                h('span', {class: ['status', `verify-${status}`], id: 'me-verify-status', 'data-status': status}, t(`verify.status.${status}`))),
            item('#/me/phone', 'me-change-phone', t('me.changePhone')),
            item('#/me/password', 'me-password', t(user.has_password ? 'me.changePassword' : 'me.setPassword')),
            item('#/me/devices', 'me-devices', t('me.devices')),
            item('#/me/feedback', 'me-feedback', t('me.feedback'))),
        h('ul', {class: 'menu card'},
            h('li', s.info?.support_phone
                ? h('a', {class: 'menu-item', href: `tel:${s.info.support_phone}`, id: 'support-phone'},
                    h('span', t('me.support')), h('span', {class: 'menu-value'}, formatPhone(s.info.support_phone), icon(ICONS.phone)))
                : h('p', {class: 'menu-item muted'}, t('me.noSupport'))),
            h('li', h('button', {type: 'button', class: 'menu-item', id: 'me-language', onClick: () => ctx.setLanguage(currentLanguage() === 'zh' ? 'en' : 'zh')},
                h('span', t('me.language')), h('span', {class: 'menu-value'}, currentLanguage() === 'zh' ? '中文' : 'English')))),
        h('button', {type: 'button', class: 'button danger-outline block', id: 'logout', onClick: () => ctx.actions.logout()}, t('me.logout')),
        h('p', {class: 'footnote'}, s.info && t('app.version', {version: s.info.version})));
}

function earnings(s, ctx) {
    const e = s.earnings;
    if (!e) { ctx.actions.loadEarnings(); return null; }
    const average = e.rating_count ? (e.rating_stars / e.rating_count).toFixed(1) : '—';
    return h('section', {class: 'card stats-row', id: 'me-earnings'},
        h('div', h('strong', String(e.completed_count)), h('span', t('earnings.completed'))),
        h('div', h('strong', yuan(e.total)), h('span', t('earnings.total'))),
        h('div', h('strong', String(e.active_count)), h('span', t('earnings.active'))),
        h('div', h('strong', average), h('span', t('earnings.rating'))));
}

export function mePageView(s, ctx) {
    const page = s.route.params.page;
    const pages = {profile: profilePage, phone: phonePage, password: passwordPage, verify: verifyPage,
        feedback: feedbackPage, devices: devicesPage};
    return h('main', {class: `screen me-page me-${page}`}, (pages[page] || profilePage)(s, ctx));
}

function profilePage(s, ctx) {
    const {store} = ctx;
    const user = s.auth.user;
    const form = 'me-profile';
    const onSubmit = (event) => {
        event.preventDefault();
        const values = draft(store.state, form);
        const change = {};
        for (const key of ['nickname', 'gender', 'campus', 'dorm', 'bio']) {
            const current = user[key] ?? '';
            const next = (values[key] ?? current).trim();
            if (next !== current) change[key] = next;
        }
        if (Object.keys(change).length === 0) { history.back(); return; }
        ctx.actions.updateProfile(change);
    };
    const campuses = s.info?.campuses || [];
    return [
        pageHeader(t('me.editProfile'), {back: '#/me'}),
        h('form', {class: 'card form', id: form, onSubmit, novalidate: true},
            field(store, form, 'nickname', {label: t('profile.nickname'), fallback: user.nickname, attrs: {maxlength: 20},
                hint: t('profile.nicknameHint')}),
            field(store, form, 'gender', {label: t('profile.gender'), kind: 'select', fallback: user.gender,
                options: ['undisclosed', 'female', 'male'].map((g) => [g, t(`gender.${g}`)])}),
            campuses.length > 0
                ? field(store, form, 'campus', {label: t('field.campus'), kind: 'select', fallback: user.campus || '',
                    options: [['', t('profile.noCampus')], ...campuses.map((c) => [c, c])]})
                : field(store, form, 'campus', {label: t('field.campus'), fallback: user.campus || '', attrs: {maxlength: 40}}),
            field(store, form, 'dorm', {label: t('profile.dorm'), fallback: user.dorm || '', attrs: {maxlength: 40}, hint: t('profile.dormHint')}),
            field(store, form, 'bio', {label: t('profile.bio'), kind: 'textarea', fallback: user.bio || '', attrs: {maxlength: 200}}),
            formError(store, form),
            submitButton(store, form, t('common.save'), t('common.saving'), {id: 'profile-save'})),
    ];
}

function phonePage(s, ctx) {
    const {store, actions} = ctx;
    const form = 'me-phone';
    const values = () => draft(store.state, form);
    const onSubmit = (event) => { event.preventDefault(); actions.changePhone(values().phone || '', values().code || ''); };
    return [
        pageHeader(t('me.changePhone'), {back: '#/me'}),
        h('form', {class: 'card form', id: form, onSubmit, novalidate: true},
            h('p', {class: 'hint'}, t('phone.current', {phone: formatPhone(s.auth.user.phone)})),
            h('div', {class: 'field-with-button'},
                field(store, form, 'phone', {label: t('phone.new'), kind: 'tel', attrs: {inputmode: 'tel', maxlength: 32}}),
                sendCodeButton(s, () => actions.sendChangePhoneCode(values().phone || ''), 'change_phone', 'phone-send-code')),
            devCodeNotice(store, 'change_phone', (code) => store.update((st) => { draft(st, form).code = code; })),
            field(store, form, 'code', {label: t('login.code'), hint: t('phone.codeHint'), attrs: {inputmode: 'numeric', maxlength: 16}}),
            formError(store, form),
            submitButton(store, form, t('phone.submit'), t('common.saving'), {id: 'phone-submit'})),
    ];
}

function passwordPage(s, ctx) {
    const {store} = ctx;
    const form = 'me-password';
    const hasPassword = s.auth.user.has_password;
    const min = s.info?.limits?.password_min_length ?? 8;
    const onSubmit = (event) => { event.preventDefault(); ctx.actions.setPassword({...draft(store.state, form)}); };
    const errors = formState(s, form).errors;
    if (errors.password && !errors.new_password) errors.new_password = errors.password;
    return [
        pageHeader(t(hasPassword ? 'me.changePassword' : 'me.setPassword'), {back: '#/me'}),
        h('form', {class: 'card form', id: form, onSubmit, novalidate: true},
            h('p', {class: 'hint'}, t('password.explain')),
            hasPassword && field(store, form, 'old_password', {label: t('password.old'), kind: 'password', attrs: {autocomplete: 'current-password', maxlength: 128}}),
            field(store, form, 'new_password', {label: t('password.new'), kind: 'password', hint: t('password.hint', {min}),
                attrs: {autocomplete: 'new-password', maxlength: 128}}),
            field(store, form, 'repeat', {label: t('password.repeat'), kind: 'password', attrs: {autocomplete: 'new-password', maxlength: 128}}),
            formError(store, form),
            submitButton(store, form, t('common.save'), t('common.saving'), {id: 'password-save'})),
    ];
}

function verifyPage(s, ctx) {
    const {store} = ctx;
    const user = s.auth.user;
    const status = verificationStatus(user);
    const v = user.verification;
    const form = 'me-verify';
    const onSubmit = (event) => {
        event.preventDefault();
        const values = draft(store.state, form);
        ctx.actions.submitVerification({
            real_name: (values.real_name || '').trim(), student_id: (values.student_id || '').trim(), school: (values.school || '').trim()});
    };
    const statusBox = h('div', {class: ['verify-box', `verify-${status}`], id: 'verify-status', 'data-status': status},
        h('p', {class: 'verify-title'}, t(`verify.status.${status}`)),
        h('p', t(`verify.explain.${status}`)),
        v && status !== 'none' && h('p', {class: 'muted'}, t('verify.submittedAt', {when: dateTime(v.submitted_at)}), ' · ', v.school),
        v?.rejection_reason && h('p', {class: 'form-error', id: 'verify-reason'}, t('verify.reason', {reason: v.rejection_reason})));
    const canApply = status === 'none' || status === 'rejected';
    return [
        pageHeader(t('me.verification'), {back: '#/me'}),
        h('section', {class: 'card'}, statusBox),
        canApply && h('form', {class: 'card form', id: form, onSubmit, novalidate: true},
            h('p', {class: 'hint'}, t('verify.why')),
            field(store, form, 'real_name', {label: t('verify.realName'), required: true, attrs: {maxlength: 40, autocomplete: 'name'}, hint: t('verify.privateHint')}),
            field(store, form, 'student_id', {label: t('verify.studentId'), required: true, attrs: {maxlength: 32}, hint: t('verify.studentIdHint')}),
            campusField(store, form, 'school', {label: t('verify.school'), fallback: user.campus || ''}),
            formError(store, form),
            submitButton(store, form, t('verify.submit'), t('common.sending'), {id: 'verify-submit'})),
        status === 'approved' && h('a', {class: 'button primary block', href: '#/discover', id: 'verify-go-discover'}, t('verify.goDiscover')),
    ];
}

function feedbackPage(s, ctx) {
    const {store} = ctx;
    const form = 'me-feedback';
    const onSubmit = (event) => {
        event.preventDefault();
        const values = draft(store.state, form);
        const request = {text: (values.text || '').trim()};
        if ((values.contact || '').trim()) request.contact = values.contact.trim();
        ctx.actions.sendFeedback(request);
    };
    return [
        pageHeader(t('me.feedback'), {back: '#/me'}),
        h('form', {class: 'card form', id: form, onSubmit, novalidate: true},
            field(store, form, 'text', {label: t('feedback.text'), kind: 'textarea', required: true, attrs: {maxlength: 1000, rows: 5},
                hint: t('feedback.textHint')}),
            field(store, form, 'contact', {label: t('feedback.contact'), hint: t('feedback.contactHint'), attrs: {maxlength: 100}}),
            formError(store, form),
            submitButton(store, form, t('feedback.submit'), t('common.sending'), {id: 'feedback-submit'})),
        s.info?.support_phone && h('p', {class: 'footnote'}, t('feedback.orCall'), ' ',
            h('a', {href: `tel:${s.info.support_phone}`, class: 'tap', id: 'feedback-support'}, formatPhone(s.info.support_phone))),
    ];
}

function devicesPage(s, ctx) {
    const {store} = ctx;
    if (!s.sessions && !formState(s, 'me-devices').busy && !formState(s, 'me-devices').error) ctx.actions.loadSessions();
    const sessions = s.sessions || [];
    return [
        pageHeader(t('me.devices'), {back: '#/me'}),
        h('p', {class: 'hint'}, t('devices.explain')),
        formError(store, 'me-devices'),
        h('ul', {class: 'card rows', id: 'devices-list'}, sessions.map((session) => h('li', {class: 'device', 'data-session-id': session.id},
            h('div',
                h('p', {class: 'row-title'}, session.device || t('devices.unnamed'),
                    session.is_current && h('span', {class: 'badge ok'}, t('devices.current'))),
                h('p', {class: 'muted'}, t('devices.since', {when: dateTime(session.issued_at)}))),
            h('button', {type: 'button', class: 'button small danger-outline', id: `revoke-${session.id}`,
                onClick: () => ctx.actions.revokeSession(session.id, session.is_current)},
            session.is_current ? t('me.logout') : t('devices.revoke'))))),
    ];
}
