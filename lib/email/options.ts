// Construction-time checks of the email verifier's options, with messages that state the fix.
import { isIP } from 'node:net'
import { optionError } from '../errors.js'

function fail(kind: 'type' | 'range', option: string, expectation: string, value: unknown, fix: string): never {
  throw optionError(kind, option, expectation, value, fix)
}

/** `value`, or `fallback` when `undefined`; throws unless a finite number in [min, max] (integer if asked). */
export function numberOption(
  option: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
  integer: boolean,
  fix: string
): number {
  if (value === undefined) return fallback
  const expectation = `${integer ? 'an integer' : 'a number'} from ${min} to ${max}`
  if (typeof value !== 'number' || Number.isNaN(value)) fail('type', option, expectation, value, fix)
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value)))
    fail('range', option, expectation, value, fix)
  return value
}

/** `value`, or `fallback` when `undefined`; throws unless a boolean. */
export function booleanOption(option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') fail('type', option, 'a boolean', value, 'Pass true or false, or leave it out for the default.')
  return value
}

/** `value`, or `[]` when `undefined`; throws unless an array of strings. */
export function stringArrayOption(option: string, value: unknown, fix: string): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) fail('type', option, 'an array of strings', value, fix)
  return value as string[]
}

/** `value` when `undefined` or a plain object; throws otherwise. */
export function objectOption(option: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail('type', option, 'an object', value, 'Pass an object literal, or leave it out for the defaults.')
  return value as Record<string, unknown>
}

/** `value` when `undefined` or a function; throws otherwise. */
export function functionOption<T>(option: string, value: unknown, fallback: T): T {
  if (value === undefined) return fallback
  if (typeof value !== 'function') fail('type', option, 'a function', value, 'Pass a function such as () => Date.now(), or leave it out.')
  return value as T
}

/** Throws unless `value` is an object with the given methods. */
export function resolverOption<T>(option: string, value: unknown, methods: string[]): T | undefined {
  if (value === undefined) return undefined
  const ok =
    typeof value === 'object' && value !== null && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
  if (!ok)
    fail(
      'type',
      option,
      `an object with ${methods.join(', ')} methods (like dns.promises.Resolver)`,
      value,
      'Pass a dns.promises.Resolver, or use `dnsServers` instead.'
    )
  return value as T
}

/**
 * Checks a DNS server list (`ip` or `ip:port`, IPv6 as `::1` or `[::1]:53`) and returns it
 * unchanged; throws on the first entry that is no IP address with an optional port.
 */
export function dnsServersOption(option: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  const fix = 'Give IP addresses such as "1.1.1.1", "127.0.0.1:5353" or "[::1]:53" (host names are not accepted).'
  if (!Array.isArray(value) || value.length === 0) fail('type', option, 'a non-empty array of "ip" or "ip:port" strings', value, fix)
  for (const entry of value as unknown[]) {
    if (typeof entry !== 'string' || !isServer(entry)) fail('type', option, 'a non-empty array of "ip" or "ip:port" strings', value, fix)
  }
  return value as string[]
}

function isServer(entry: string): boolean {
  if (isIP(entry) !== 0) return true
  const v6 = /^\[([0-9a-fA-F:.]+)\]:(\d{1,5})$/.exec(entry)
  if (v6 !== null) return isIP(v6[1]!) === 6 && Number(v6[2]) > 0 && Number(v6[2]) < 65536
  const v4 = /^([0-9.]+):(\d{1,5})$/.exec(entry)
  return v4 !== null && isIP(v4[1]!) === 4 && Number(v4[2]) > 0 && Number(v4[2]) < 65536
}
