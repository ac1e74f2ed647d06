// The stand-in's event pattern matching against the examples of EventBridge's documentation:
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-content-based-filtering.html
// (prefix, suffix, anything-but, numeric, exists, equals-ignore-case, wildcard, $or) and
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns-arrays.html (arrays).
import { describe, expect, it } from 'vitest';
import { compileEventPattern } from '../../dev/event-pattern.ts';

/** The documentation's EC2 example event, with the numeric fields its content-filtering examples use. */
const EC2 = {
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '111122223333',
  time: '2017-12-22T18:43:48Z',
  region: 'us-west-1',
  resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0'],
  detail: {
    'instance-id': 'i-1234567890abcdef0',
    state: 'terminated',
    'c-count': 5,
    'd-count': 3,
    'x-limit': 301.8,
    FileName: 'photo.png',
  },
};
const matches = (pattern: unknown, event: unknown = EC2) => compileEventPattern(pattern)(event);
const withDetail = (detail: Record<string, unknown>) => ({ ...EC2, detail: { ...EC2.detail, ...detail } });

describe('event patterns (EventBridge content filtering)', () => {
  it('matches exact values, an array of values being an OR, and every field (AND)', () => {
    expect(matches({ source: ['aws.ec2'], detail: { state: ['running', 'terminated'] } })).toBe(true);
    expect(matches({ source: ['aws.ec2'], detail: { state: ['running'] } })).toBe(false);
    expect(matches({ source: ['aws.s3'] })).toBe(false);
    // Numbers match numbers: 5 is not "5".
    expect(matches({ detail: { 'c-count': ['5'] } })).toBe(false);
    expect(matches({ detail: { 'c-count': [5] } })).toBe(true);
  });

  it('matches an event array when any element matches (arrays page: resources)', () => {
    expect(
      matches({ resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0', 'x'] }),
    ).toBe(true);
    expect(matches({ resources: ['x'] })).toBe(false);
  });

  it('prefix and suffix, also ignoring case ({"time": [{"prefix": "2017-10-02"}]}, {"FileName": [{"suffix": ".png"}]})', () => {
    expect(matches({ time: [{ prefix: '2017-12-22' }] })).toBe(true);
    expect(matches({ time: [{ prefix: '2017-10-02' }] })).toBe(false);
    expect(matches({ detail: { FileName: [{ suffix: '.png' }] } })).toBe(true);
    expect(matches({ detail: { FileName: [{ suffix: { 'equals-ignore-case': '.PNG' } }] } })).toBe(true);
    expect(matches({ detail: { FileName: [{ prefix: { 'equals-ignore-case': 'PHOTO' } }] } })).toBe(true);
    // A prefix matches strings only.
    expect(matches({ detail: { 'c-count': [{ prefix: '5' }] } })).toBe(false);
  });

  it('anything-but: a value, a list, a prefix, a suffix; a missing field never matches', () => {
    expect(matches({ detail: { state: [{ 'anything-but': 'initializing' }] } })).toBe(true);
    expect(matches({ detail: { state: [{ 'anything-but': ['stopped', 'terminated'] }] } })).toBe(false);
    expect(matches({ detail: { 'c-count': [{ 'anything-but': [4, 6] }] } })).toBe(true);
    expect(matches({ detail: { state: [{ 'anything-but': { prefix: 'term' } }] } })).toBe(false);
    expect(matches({ detail: { FileName: [{ 'anything-but': { suffix: '.txt' } }] } })).toBe(true);
    expect(
      matches({ detail: { state: [{ 'anything-but': { 'equals-ignore-case': ['TERMINATED'] } }] } }),
    ).toBe(false);
    expect(matches({ detail: { lift: [{ 'anything-but': ['approve'] }] } })).toBe(false);
  });

  it('numeric ranges ({"c-count": [{"numeric": [">", 0, "<=", 5]}]}) match numbers only', () => {
    expect(matches({ detail: { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] } })).toBe(true);
    expect(matches({ detail: { 'c-count': [{ numeric: ['>', 5] }] } })).toBe(false);
    expect(matches({ detail: { 'x-limit': [{ numeric: ['=', 3.018e2] }] } })).toBe(true);
    expect(matches({ detail: { state: [{ numeric: ['>', 0] }] } })).toBe(false);
  });

  it('exists: true for a present leaf, false for an absent field', () => {
    expect(matches({ detail: { state: [{ exists: true }] } })).toBe(true);
    expect(matches({ detail: { 'c-count': [{ exists: false }] } })).toBe(false);
    expect(matches({ detail: { revision: [{ exists: false }] } })).toBe(true);
    expect(matches({ detail: { revision: [{ exists: true }] } })).toBe(false);
  });

  it('equals-ignore-case and wildcard ({"detail-type": [{"equals-ignore-case": "ec2 instance state-change notification"}]})', () => {
    expect(
      matches({ 'detail-type': [{ 'equals-ignore-case': 'ec2 instance state-change notification' }] }),
    ).toBe(true);
    expect(matches({ resources: [{ wildcard: 'arn:aws:ec2:us-west-1:*:instance/*' }] })).toBe(true);
    expect(matches({ resources: [{ wildcard: 'arn:aws:ec2:eu-west-1:*' }] })).toBe(false);
    expect(matches({ detail: { FileName: [{ wildcard: 'photo\\*' }] } })).toBe(false);
    expect(
      matches({ detail: { FileName: [{ wildcard: 'photo.png' }] } }, withDetail({ FileName: 'photoXpng' })),
    ).toBe(false);
  });

  it('$or: any of the alternatives, each with the fields beside it', () => {
    const pattern = {
      source: ['aws.ec2'],
      detail: {
        $or: [
          { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] },
          { 'd-count': [{ numeric: ['<', 10] }] },
          { 'x-limit': [{ numeric: ['=', 3.018e2] }] },
        ],
      },
    };
    expect(matches(pattern)).toBe(true);
    expect(matches(pattern, withDetail({ 'c-count': 50, 'd-count': 30, 'x-limit': 1 }))).toBe(false);
    expect(matches(pattern, withDetail({ 'c-count': 50, 'd-count': 3, 'x-limit': 1 }))).toBe(true);
    expect(matches({ ...pattern, source: ['aws.s3'] })).toBe(false);
  });

  it('refuses, naming the field, what it does not understand: cidr, unknown operators, empty arrays, bad ranges', () => {
    expect(() => compileEventPattern({ detail: { ip: [{ cidr: '10.0.0.0/24' }] } })).toThrow(
      "detail.ip[0].cidr: the EventBridge stand-in does not implement the 'cidr' operator",
    );
    expect(() => compileEventPattern({ detail: { state: [{ 'starts-with': 'x' }] } })).toThrow(
      "detail.state[0].starts-with: 'starts-with' is not an EventBridge match operator",
    );
    expect(() => compileEventPattern({ source: [] })).toThrow('source: an empty array matches nothing');
    expect(() => compileEventPattern({ source: 'aws.ec2' })).toThrow('source: a pattern');
    expect(() => compileEventPattern({ detail: { n: [{ numeric: ['>', 1, '>', 2] }] } })).toThrow(
      'two bounds must be one lower',
    );
    expect(() => compileEventPattern({ detail: { f: [{ wildcard: 'a**b' }] } })).toThrow(
      'consecutive wildcard',
    );
    expect(() => compileEventPattern({ detail: { $or: [{ a: ['x'] }] } })).toThrow(
      '$or takes an array of at least two',
    );
  });
});
