import t from 'tap'
import type { DnsCheck } from '../lib/types.js'
const x: DnsCheck = 'Pass'
t.equal(x, 'Pass')
