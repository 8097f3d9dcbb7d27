// Tells role accounts (admin@, info@, noreply@ …) from personal mailboxes.

const ROLES = new Set([
  'abuse', 'accounting', 'accounts', 'admin', 'administrator', 'admissions', 'alerts', 'all', 'billing', 'booking',
  'bookings', 'careers', 'ceo', 'compliance', 'contact', 'contactus', 'customercare', 'customerservice', 'customersupport',
  'dev', 'devops', 'donotreply', 'editor', 'enquiries', 'enquiry', 'events', 'everyone', 'feedback', 'finance', 'hello',
  'help', 'helpdesk', 'hostmaster', 'hr', 'info', 'information', 'inquiries', 'inquiry', 'investorrelations', 'investors',
  'invoice', 'invoices', 'it', 'jobs', 'legal', 'list', 'listserv', 'mail', 'mailerdaemon', 'majordomo', 'marketing',
  'media', 'news', 'newsletter', 'noc', 'noreply', 'notifications', 'notify', 'office', 'operations', 'ops', 'orders',
  'partners', 'payments', 'postmaster', 'press', 'privacy', 'purchasing', 'recruiting', 'recruitment', 'reception',
  'registrar', 'reservations', 'root', 'sales', 'security', 'service', 'services', 'shop', 'staff', 'store', 'subscribe',
  'support', 'sysadmin', 'team', 'tech', 'techsupport', 'unsubscribe', 'usenet', 'uucp', 'webadmin', 'webmaster', 'www'
])

/**
 * `true` when the local part names a role rather than a person (`admin`, `info`, `support`,
 * `noreply`, `postmaster`, …). Case, a `+tag` and the separators `.`, `-`, `_` are ignored,
 * so `No-Reply+x` and `no.reply` count as `noreply`.
 */
export function isRoleAccount (username: string): boolean {
  let local = username.toLowerCase()
  if (local.startsWith('"') && local.endsWith('"') && local.length >= 2) local = local.slice(1, -1)
  const plus = local.indexOf('+')
  if (plus > 0) local = local.slice(0, plus)
  return ROLES.has(local.replace(/[.\-_]/g, ''))
}
