// Feedback from users, newest first, a page at a time.

import {h} from '../core/dom.js';
import {t} from '../core/i18n.js';
import {dateTime} from '../core/format.js';
import {formError} from '../ui/components.js';

export function feedbackView(s, ctx) {
    const f = s.feedback;
    return h('section', {class: 'card'},
        h('div', {class: 'section-head'},
            h('h2', t('admin.feedback')),
            h('button', {type: 'button', class: 'button small secondary', id: 'feedback-refresh', onClick: () => ctx.actions.loadFeedback(false)}, t('discover.refresh'))),
        formError(ctx.store, 'feedback'),
        f.items === null ? h('p', {class: 'empty'}, t('common.loading'))
            : f.items.length === 0 ? h('p', {class: 'empty'}, t('admin.noFeedback'))
            : h('ul', {class: 'rows', id: 'feedback-list'}, f.items.map((item) => h('li', {class: 'feedback-item', 'data-feedback-id': item.id},
                h('p', {class: 'muted'}, [`#${item.id}`, t('admin.userId', {id: item.user_id}), dateTime(item.submitted_at),
                    item.contact ? t('admin.contact', {contact: item.contact}) : null].filter(Boolean).join(' · ')),
                h('p', {class: 'pre'}, item.text)))),
        f.next && h('button', {type: 'button', class: 'button secondary block', id: 'feedback-more', onClick: () => ctx.actions.loadFeedback(true)}, t('orders.more')));
}
