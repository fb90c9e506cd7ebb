/**
 * Every string the dashboard shows, in one catalogue per language (issue 28: English first,
 * ready for Swahili and French). A page names a key, never a sentence; `{name}` is filled in.
 */
const en = {
  appName: 'Partner dashboard',
  skipToContent: 'Skip to content',
  signInTitle: 'Sign in',
  signInIntro: 'Sign in with the email and password of your dashboard account.',
  email: 'Email',
  password: 'Password',
  signIn: 'Sign in',
  signingIn: 'Signing in…',
  signOut: 'Sign out',
  signedOut: 'You are signed out.',
  sessionEnded: 'Your session ended. Sign in again.',
  badCredentials: 'The email or password is not right.',
  tooManyAttempts: 'Too many attempts. Try again in {seconds} seconds.',
  networkError: 'The platform could not be reached. Check your connection and try again.',
  forbidden: 'Your role does not allow this ({message}).',
  loading: 'Loading…',
  signedInAs: 'Signed in as {name} ({role})',
  navMain: 'Main',
  navOverview: 'Overview',
  navDeterminations: 'Determinations',
  overviewTitle: 'Overview',
  activePolicies: 'Active policies',
  awaitingReport: 'Determinations awaiting a settlement report',
  overdueReports: 'Overdue settlement reports',
  payoutsByStatus: 'Tier 2 payouts by status',
  failedDeliveries: 'Failed webhook deliveries',
  notAvailable: 'Not available to your role',
  determinationsTitle: 'Determinations',
  filterSettlement: 'Settlement status',
  filterTriggered: 'Triggered',
  any: 'Any',
  yes: 'Yes',
  no: 'No',
  apply: 'Apply',
  colPolicy: 'Policy',
  colKind: 'Kind',
  colTriggered: 'Triggered',
  colDamage: 'Damage',
  colAmountOwed: 'Amount owed',
  colSettlement: 'Settlement',
  colIssued: 'Issued',
  colDue: 'Due',
  none: 'None',
  noDeterminations: 'No determinations match.',
  previous: 'Previous',
  next: 'Next',
  pageOf: 'Page {page} of {pages} ({total} in all)',
  pagination: 'Pages of {what}',
  exportCsv: 'Export CSV',
  exportDone: 'Exported {rows} rows.',
  exportTruncated: 'Exported the first {rows} of {total} rows: narrow the filter for the rest.',
  open: 'Open',
  determinationTitle: 'Determination {id}',
  backToList: 'Back to determinations',
  signature: 'Signature',
  signatureChecking: 'Checking signature…',
  signatureVerified: 'Signature verified',
  signatureVerifiedDetail: 'Checked in this browser with key {kid} from the platform’s published keys.',
  signatureSandbox: 'A sandbox key: this is a test determination, which live systems refuse.',
  signatureInvalid: 'Signature invalid',
  signatureInvalidDetail: 'This record does not match what the platform signed: {reason}',
  amountBasis: 'Basis',
  amountUnavailable: 'No amount: {reason}',
  methodology: 'Methodology',
  assessedAt: 'Assessed',
  settlementMode: 'Settlement mode',
  evidence: 'Evidence',
  settlementReports: 'Settlement reports',
  noReports: 'No settlement report yet.',
  reportOutcome: '{outcome}: {amount} {currency} on {date} ({reference})',
  superseded: 'superseded',
  notFound: 'Not found.',
  errorGeneric: 'Something went wrong: {message}',
} as const;

export type StringKey = keyof typeof en;
const catalogues: Record<string, Record<StringKey, string>> = { en };

/** The catalogue of the browser's first language that has one; English otherwise. */
function catalogue(): Record<StringKey, string> {
  for (const language of navigator.languages ?? [navigator.language]) {
    const found = catalogues[language.split('-')[0] ?? ''];
    if (found) return found;
  }
  return en;
}

const strings = catalogue();

export function t(key: StringKey, vars: Record<string, string | number> = {}): string {
  return strings[key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in vars ? String(vars[name]) : whole,
  );
}
