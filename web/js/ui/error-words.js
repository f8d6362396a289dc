// The app's own words for a refused field. The server names the field (`details.items[1].qty`)
// and, where a number says what was allowed, its bounds (`min`, `max`, in the field's unit:
// characters, fen, milliseconds since the epoch, a count); its `message` is English for logs
// and is never shown. A sentence is looked up from the most particular to the most general:
// the field and the kind of bound (`invalid.tip.max`), then the field's unit and the kind
// (`invalid.money.max`), then a plain "this is not accepted" with the field's name.

import {has, t} from '../core/i18n.js';
import {dateTime, yuan} from '../core/format.js';

const MONEY = new Set(['tip', 'goods_budget', 'price_per_share', 'min_tip', 'fee']);
const TIME = new Set(['deadline', 'closes_at']);
const COUNT = new Set(['qty', 'capacity', 'minimum_fill', 'stars', 'items', 'limit', 'order_id', 'user_id']);

/** `details.items[2].qty` → `qty`; `details.pickup_station` → `pickup_station`. */
export function fieldName(path) {
    const last = String(path || '').split('.').pop();
    return last.replace(/\[\d+\]$/, '');
}

function unitOf(name) {
    return MONEY.has(name) ? 'money' : TIME.has(name) ? 'time' : COUNT.has(name) ? 'count' : 'text';
}

function shown(unit, value) {
    if (value === null || value === undefined) return '';
    if (unit === 'money') return yuan(value);
    if (unit === 'time') return dateTime(value);
    return String(value);
}

/** Words for an `invalid_field` error: `{field, min, max}` as the server sent them. */
export function invalidFieldText({field, min = null, max = null}) {
    const name = fieldName(field);
    const unit = unitOf(name);
    const label = has(`label.${name}`) ? t(`label.${name}`) : t('label.this');
    let kind = min !== null && max !== null ? 'range' : max !== null ? 'max' : min !== null ? 'min' : 'bad';
    // A blank required text is "required", not "at least 1 character".
    if (kind === 'min' && unit === 'text' && min <= 1) kind = 'required';
    if (kind === 'min' && unit === 'money' && min <= 0) kind = 'negative';
    // Money from ¥0 up: a value refused by such a range was above it (the form takes no minus).
    if (kind === 'range' && unit === 'money' && min === 0) kind = 'max';
    const params = {label, min: shown(unit, min), max: shown(unit, max),
        below: unit === 'money' && min !== null ? yuan(min - 1) : ''};
    for (const key of [`invalid.${name}.${kind}`, `invalid.${unit}.${kind}`]) {
        if (has(key)) return t(key, params);
    }
    return t('invalid.bad', params);
}
