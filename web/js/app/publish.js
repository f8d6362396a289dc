// Turns what was typed into a Find form into an `order.publish` request, checking first what
// the seed's confirm() checked: that nothing required is missing. Everything else (ranges,
// lengths, the campus list) the server checks and names the field; the form shows it there.

import {parseLocalInput, parseYuan} from '../core/format.js';
import {FieldErrors} from '../ui/forms.js';

const REQUIRED = {
    express: ['details.pickup_station', 'details.drop_off_place'],
    purchase: ['details.drop_off_place'],
    bounty: ['details.title', 'details.description'],
    group: ['details.subject'],
};

const OPTIONAL_TEXT = {
    express: ['details.pickup_code', 'details.drop_off_room', 'details.contact_phone'],
    purchase: ['details.store', 'details.drop_off_room'],
    bounty: ['details.place'],
    group: [],
};

export function emptyItem() { return {name: '', qty: '1', note: ''}; }

export function buildPublish(type, draft) {
    const errors = {};
    const text = (name) => String(draft[name] ?? '').trim();
    const leaf = (name) => name.slice('details.'.length);
    const details = {};
    const request = {type, campus: text('campus'), details};

    if (!request.campus) errors.campus = 'find.required';
    for (const name of REQUIRED[type]) {
        if (text(name)) details[leaf(name)] = text(name);
        else errors[name] = 'find.required';
    }
    for (const name of OPTIONAL_TEXT[type]) if (text(name)) details[leaf(name)] = text(name);
    // A bare mainland mobile number means +86 (servers before protocol decision 8 want E.164).
    if (/^1[3-9]\d{9}$/.test(details.contact_phone || '')) details.contact_phone = `+86${details.contact_phone}`;

    const deadline = parseLocalInput(draft.deadline);
    if (deadline === null) errors.deadline = 'find.required';
    else request.deadline = deadline;

    if (type !== 'group') {
        const tip = parseYuan(draft.tip);
        if (tip === null) errors.tip = text('tip') ? 'find.badMoney' : 'find.required';
        else request.tip = tip;
        if (draft.delivery_code) request.delivery_code = true;
    }

    if (type === 'express') details.parcel_size = draft['details.parcel_size'] || 'small';
    if (type === 'purchase') {
        const items = (draft.items || []).filter((item) => item.name.trim() || item.note.trim());
        if (items.length === 0) errors['details.items[0].name'] = 'find.needItem';
        details.items = items.map((item, index) => {
            const entry = {name: item.name.trim(), qty: Number(item.qty)};
            if (!entry.name) errors[`details.items[${index}].name`] = 'find.required';
            if (!/^\d+$/.test(String(item.qty).trim())) errors[`details.items[${index}].qty`] = 'find.badNumber';
            if (item.note.trim()) entry.note = item.note.trim();
            return entry;
        });
        if (text('details.goods_budget')) {
            const budget = parseYuan(draft['details.goods_budget']);
            if (budget === null) errors['details.goods_budget'] = 'find.badMoney';
            else details.goods_budget = budget;
        }
    }
    if (type === 'group') {
        details.kind = draft['details.kind'] || 'carpool';
        const closes = parseLocalInput(draft['details.closes_at']);
        if (closes === null) errors['details.closes_at'] = 'find.required';
        else details.closes_at = closes;
        for (const name of ['capacity', 'minimum_fill']) {
            const value = text(`details.${name}`);
            if (!value) { if (name === 'capacity') errors['details.capacity'] = 'find.required'; continue; }
            if (!/^\d+$/.test(value)) errors[`details.${name}`] = 'find.badNumber';
            else details[name] = Number(value);
        }
        const price = parseYuan(draft['details.price_per_share']);
        if (price === null) errors['details.price_per_share'] = text('details.price_per_share') ? 'find.badMoney' : 'find.required';
        else details.price_per_share = price;
    }
    if (Object.keys(errors).length > 0) throw new FieldErrors(errors);
    return request;
}
