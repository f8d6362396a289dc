// Pending runner verifications, oldest first, each with approve and reject (with a reason the
// applicant reads). The applicant's app hears the decision at once (runner.verification_decided).

import {h} from '../core/dom.js';
import {t} from '../core/i18n.js';
import {dateTime, phone} from '../core/format.js';
import {formError} from '../ui/components.js';
import {draft, formState} from '../ui/forms.js';

export function verificationsView(s, ctx) {
    const {store, actions} = ctx;
    const list = s.pending;
    return h('section', {class: 'card'},
        h('div', {class: 'section-head'},
            h('h2', t('admin.pending')),
            h('button', {type: 'button', class: 'button small secondary', id: 'pending-refresh', onClick: () => actions.loadPending()}, t('discover.refresh'))),
        formError(store, 'pending'),
        list === null ? h('p', {class: 'empty'}, t('common.loading'))
            : list.length === 0 ? h('p', {class: 'empty', id: 'pending-empty'}, t('admin.noPending'))
            : h('ul', {class: 'rows', id: 'pending-list'}, list.map((user) => {
                const v = user.verification;
                const form = `decide-${user.id}`;
                const busy = formState(s, form).busy;
                return h('li', {class: 'applicant', 'data-user-id': user.id},
                    h('div', {class: 'applicant-text'},
                        h('p', {class: 'row-title'}, `${v.real_name} · ${v.student_id}`),
                        h('p', {class: 'muted'}, [v.school, user.nickname, phone(user.phone), t('admin.userId', {id: user.id}),
                            t('verify.submittedAt', {when: dateTime(v.submitted_at)})].join(' · '))),
                    h('div', {class: 'applicant-actions'},
                        h('button', {type: 'button', class: 'button small primary', id: `approve-${user.id}`, disabled: busy,
                            onClick: () => actions.decide(user.id, 'approve')}, t('admin.approve')),
                        h('input', {id: `reject-reason-${user.id}`, placeholder: t('admin.rejectReason'), maxlength: 200,
                            'aria-label': t('admin.rejectReason'), value: draft(s, form).reason || '',
                            onInput: (event) => store.quietly((st) => { draft(st, form).reason = event.target.value; })}),
                        h('button', {type: 'button', class: 'button small danger-outline', id: `reject-${user.id}`, disabled: busy,
                            onClick: () => actions.decide(user.id, 'reject', draft(store.state, form).reason || '')}, t('admin.reject'))),
                    formError(store, form));
            })));
}
