import { createDecipheriv } from 'node:crypto';
import { ENCRYPTED_VALUE } from '../manifests/sops-format.ts';

/** A value that does not decrypt; the message never holds the plaintext. */
export class ValueError extends Error {
  override readonly name = 'ValueError';
}

/**
 * A sops value decrypted with the data key; `aad` is the value's path (`data:password:`) or, for
 * the MAC, the file's `lastmodified`. AES-GCM authenticates both, so a value moved to another path
 * or changed does not decrypt. Returns the value as sops types it (`str`, `int`, `float`, `bool`).
 */
export function decryptValue(ciphertext: string, dataKey: Buffer, aad: string): unknown {
  if (ciphertext === '') return '';
  const match = ENCRYPTED_VALUE.exec(ciphertext);
  if (!match) throw new ValueError('is not a sops-encrypted value (ENC[AES256_GCM,…])');
  const [, data, iv, tag, type] = match as unknown as [string, string, string, string, string];
  let plain: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    plain = Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]);
  } catch {
    throw new ValueError('does not decrypt with the data key (tampered with, or moved from another path)');
  }
  return typed(plain.toString('utf8'), type);
}

function typed(text: string, type: string): unknown {
  switch (type) {
    case 'str':
    case 'bytes':
      return text;
    case 'int':
      if (!/^[-+]?\d+$/.test(text)) throw new ValueError('is typed int but is not a whole number');
      return Number(text);
    case 'float':
      if (Number.isNaN(Number(text))) throw new ValueError('is typed float but is not a number');
      return Number(text);
    case 'bool':
      if (!/^(true|false|1|0|t|f)$/i.test(text))
        throw new ValueError('is typed bool but is not true or false');
      return /^(true|1|t)$/i.test(text);
    default:
      throw new ValueError(`has the type "${type}", which sluice does not decrypt (str, int, float, bool)`);
  }
}

/** The bytes sops hashes into the MAC for a value (Go's `sops.ToBytes`). */
export function macBytes(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return goFloat(value);
  return String(value);
}

/** `strconv.FormatFloat(v, 'f', -1, 64)` (and `strconv.Itoa` for whole numbers): no exponent. */
function goFloat(value: number): string {
  const text = String(value);
  const exponent = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exponent) return text;
  const [, sign, lead, rest = '', power] = exponent as unknown as [string, string, string, string, string];
  const digits = lead + rest;
  const point = 1 + Number(power);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
