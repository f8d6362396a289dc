// 寻找 Find: the four order forms, with hints, and the server's errors at their fields.

import {h} from '../../core/dom.js';
import {t} from '../../core/i18n.js';
import {localInput} from '../../core/format.js';
import {campusField, field, fieldId, formError, submitButton, tabs} from '../../ui/components.js';
import {draft, formState} from '../../ui/forms.js';
import {emptyItem} from '../publish.js';
import {ORDER_TYPES} from '../state.js';

const HOUR = 3600 * 1000;

export function findView(s, ctx) {
    const type = ORDER_TYPES.includes(s.route.params.type) ? s.route.params.type : 'express';
    const form = `find-${type}`;
    const stats = s.stats?.[type];
    const onSubmit = (event) => {
        event.preventDefault();
        ctx.actions.publish(type, draft(ctx.store.state, form));
    };
    return h('main', {class: 'screen find'},
        h('h1', {class: 'screen-title'}, t('find.title')),
        tabs(ORDER_TYPES.map((key) => ({key, label: t(`type.${key}`), href: `#/find/${key}`})), type,
            {idPrefix: 'find-type', className: 'tabs types'}),
        h('p', {class: 'type-intro'}, t(`find.intro.${type}`)),
        stats && h('p', {class: 'runners-online', id: 'find-runners-online'},
            type === 'group' ? t('find.groupOpen', {open: stats.open}) : t('find.runnersOnline', {n: stats.runners_online, open: stats.open})),
        h('form', {id: form, class: 'card form', novalidate: true, onSubmit},
            fields(s, ctx, type, form),
            formError(ctx.store, form),
            submitButton(ctx.store, form, t('find.submit'), t('find.submitting'), {id: 'find-submit'})));
}

function common(ctx, form, type) {
    const {store} = ctx;
    const user = store.state.auth.user;
    return [
        campusField(store, form, 'campus', {label: t('field.campus'), fallback: user?.campus || ''}),
    ];
}

function timing(ctx, form, type) {
    const {store} = ctx;
    const list = [];
    if (type === 'group') {
        list.push(field(store, form, 'details.closes_at', {label: t('field.closes_at'), kind: 'datetime-local', required: true,
            fallback: localInput(Date.now() + HOUR), hint: t('hint.closes_at')}));
    }
    list.push(field(store, form, 'deadline', {label: t('field.deadline'), kind: 'datetime-local', required: true,
        fallback: localInput(Date.now() + (type === 'group' ? 3 : 2) * HOUR), hint: t(type === 'group' ? 'hint.groupDeadline' : 'hint.deadline')}));
    return list;
}

function reward(ctx, form, type) {
    const {store} = ctx;
    if (type === 'group') return [];
    return [
        field(store, form, 'tip', {label: t(type === 'bounty' ? 'field.reward' : 'field.tip'), required: true,
            hint: t('hint.tip'), attrs: {inputmode: 'decimal', placeholder: '5'}}),
        field(store, form, 'delivery_code', {label: t('field.delivery_code'), kind: 'checkbox', hint: t('hint.delivery_code')}),
    ];
}

function fields(s, ctx, type, form) {
    const {store} = ctx;
    const text = (name, key, options = {}) => field(store, form, name, {label: t(key), attrs: {maxlength: 60}, ...options});
    switch (type) {
    case 'express':
        return [
            common(ctx, form, type),
            text('details.pickup_station', 'field.pickup_station', {required: true, hint: t('hint.pickup_station'), attrs: {maxlength: 60, placeholder: t('placeholder.pickup_station')}}),
            text('details.pickup_code', 'field.pickup_code', {hint: t('hint.private')}),
            field(store, form, 'details.parcel_size', {label: t('field.parcel_size'), kind: 'select', fallback: 'small',
                options: ['small', 'medium', 'large'].map((size) => [size, t(`size.${size}`)])}),
            text('details.drop_off_place', 'field.drop_off_place', {required: true, attrs: {maxlength: 60, placeholder: t('placeholder.drop_off_place')}}),
            text('details.drop_off_room', 'field.drop_off_room', {hint: t('hint.private')}),
            field(store, form, 'details.contact_phone', {label: t('field.contact_phone'), kind: 'tel', hint: t('hint.contact_phone'),
                attrs: {inputmode: 'tel', maxlength: 32}}),
            timing(ctx, form, type),
            reward(ctx, form, type),
        ];
    case 'purchase':
        return [
            common(ctx, form, type),
            items(s, ctx, form),
            text('details.store', 'field.store', {hint: t('hint.store')}),
            field(store, form, 'details.goods_budget', {label: t('field.goods_budget'), hint: t('hint.goods_budget'),
                attrs: {inputmode: 'decimal', placeholder: '0'}}),
            text('details.drop_off_place', 'field.drop_off_place', {required: true, attrs: {maxlength: 60, placeholder: t('placeholder.drop_off_place')}}),
            text('details.drop_off_room', 'field.drop_off_room', {hint: t('hint.private')}),
            timing(ctx, form, type),
            reward(ctx, form, type),
        ];
    case 'bounty':
        return [
            common(ctx, form, type),
            text('details.title', 'field.title', {required: true, attrs: {maxlength: 60, placeholder: t('placeholder.title')}}),
            field(store, form, 'details.description', {label: t('field.description'), kind: 'textarea', required: true,
                hint: t('hint.description'), attrs: {maxlength: 1000, rows: 4}}),
            text('details.place', 'field.place', {hint: t('hint.place')}),
            timing(ctx, form, type),
            reward(ctx, form, type),
        ];
    default:
        return [
            common(ctx, form, type),
            field(store, form, 'details.kind', {label: t('field.kind'), kind: 'select', fallback: 'carpool',
                options: [['carpool', t('kind.carpool')], ['group_buy', t('kind.group_buy')]]}),
            text('details.subject', 'field.subject', {required: true, hint: t('hint.subject'), attrs: {maxlength: 60, placeholder: t('placeholder.subject')}}),
            h('div', {class: 'field-row'},
                field(store, form, 'details.capacity', {label: t('field.capacity'), required: true, hint: t('hint.capacity'),
                    attrs: {inputmode: 'numeric', placeholder: '4'}}),
                field(store, form, 'details.minimum_fill', {label: t('field.minimum_fill'), hint: t('hint.minimum_fill'),
                    attrs: {inputmode: 'numeric'}})),
            field(store, form, 'details.price_per_share', {label: t('field.price_per_share'), required: true, hint: t('hint.price_per_share'),
                attrs: {inputmode: 'decimal', placeholder: '10'}}),
            timing(ctx, form, type),
        ];
    }
}

/** The purchase list: one row per item, rows added and removed in place. */
function items(s, ctx, form) {
    const {store} = ctx;
    const values = draft(s, form);
    if (!values.items) values.items = [emptyItem()];
    const errors = formState(s, form).errors;
    const setItem = (index, key) => (event) => {
        const value = event.target.value;
        store.quietly((st) => { draft(st, form).items[index][key] = value; });
    };
    const remove = (index) => () => store.update((st) => {
        const list = draft(st, form).items;
        list.splice(index, 1);
        if (list.length === 0) list.push(emptyItem());
    });
    const add = () => store.update((st) => { draft(st, form).items.push(emptyItem()); });
    return h('fieldset', {class: 'field items-field'},
        h('legend', t('field.items'), h('span', {class: 'required', 'aria-hidden': 'true'}, ' *')),
        values.items.map((item, index) => {
            const base = `details.items[${index}]`;
            const rowErrors = ['name', 'qty', 'note'].filter((key) => errors[`${base}.${key}`])
                .map((key) => h('p', {class: 'field-error', role: 'alert', id: `${fieldId(form, `${base}.${key}`)}-error`}, errors[`${base}.${key}`]));
            return h('div', {class: 'item-row'},
                h('input', {id: fieldId(form, `${base}.name`), name: `${base}.name`, class: 'item-name', value: item.name,
                    placeholder: t('placeholder.itemName'), 'aria-label': t('field.itemName'), maxlength: 60, onInput: setItem(index, 'name'), onChange: setItem(index, 'name'),
                    'aria-invalid': errors[`${base}.name`] ? 'true' : null}),
                h('input', {id: fieldId(form, `${base}.qty`), name: `${base}.qty`, class: 'item-qty', value: item.qty,
                    inputmode: 'numeric', 'aria-label': t('field.qty'), onInput: setItem(index, 'qty'), onChange: setItem(index, 'qty'),
                    'aria-invalid': errors[`${base}.qty`] ? 'true' : null}),
                h('input', {id: fieldId(form, `${base}.note`), name: `${base}.note`, class: 'item-note', value: item.note,
                    placeholder: t('placeholder.itemNote'), 'aria-label': t('field.note'), maxlength: 60, onInput: setItem(index, 'note'), onChange: setItem(index, 'note')}),
                h('button', {type: 'button', class: 'button icon-only', 'aria-label': t('purchase.removeItem'), onClick: remove(index)}, '×'),
                rowErrors);
        }),
        values.items.length < 20 && h('button', {type: 'button', class: 'button small secondary', id: 'add-item', onClick: add}, t('purchase.addItem')),
        h('p', {class: 'hint'}, t('hint.items')));
}
