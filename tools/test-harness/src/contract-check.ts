import { opsDocument, partnerDocument } from '@parametric/contracts';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Document = ReturnType<typeof partnerDocument>;

interface Operation {
  template: string;
  match: RegExp;
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
}

/**
 * Holds a platform response to the generated OpenAPI document: the status must be one the
 * operation documents, and a JSON body must match that status's schema (envelope, `data`,
 * error codes; closed objects, so an undocumented field fails too).
 */
class DocumentCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly operations = new Map<string, Operation[]>();
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    document: Document,
    private readonly prefix: string,
  ) {
    addFormats(this.ajv);
    // Components are referenced as `#/components/schemas/X`: register them under the document's id.
    this.ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
    for (const [template, item] of Object.entries(document.paths ?? {})) {
      for (const [method, op] of Object.entries(
        item as Record<string, { responses: Operation['responses'] }>,
      )) {
        const match = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`);
        const list = this.operations.get(method) ?? [];
        list.push({ template, match, responses: op.responses });
        this.operations.set(method, list);
      }
    }
  }

  /** Problems with the response (empty when it conforms); undefined when no operation has this path. */
  check(
    method: string,
    path: string,
    status: number,
    contentType: string,
    body: unknown,
  ): string[] | undefined {
    if (!path.startsWith(this.prefix)) return undefined;
    const relative = path.slice(this.prefix.length) || '/';
    const candidates = (this.operations.get(method.toLowerCase()) ?? []).filter((op) =>
      op.match.test(relative),
    );
    // A literal path wins over a template (`/farmers/bulk-import` over `/farmers/{id}`).
    const op = candidates.sort((a, b) => a.template.split('{').length - b.template.split('{').length)[0];
    if (!op) return undefined;
    const where = `${method.toUpperCase()} ${op.template} → ${status}`;
    const documented = op.responses[String(status)];
    if (!documented)
      return [`${where}: status not documented (documented: ${Object.keys(op.responses).join(', ')})`];
    const [type, media] = Object.entries(documented.content ?? {})[0] ?? [];
    if (!type) return [];
    if (!contentType.startsWith(type)) return [`${where}: content-type ${contentType}, documented ${type}`];
    if (type !== 'application/json' || !media?.schema || op.template.endsWith('openapi.json')) return [];
    const key = `${method} ${op.template} ${status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      const schema = JSON.parse(JSON.stringify(media.schema).replaceAll('"#/components', '"doc#/components'));
      validate = this.ajv.compile(schema);
      this.validators.set(key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) => `${where}: ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`,
    );
  }
}

let checks: { partner: DocumentCheck; ops: DocumentCheck } | undefined;
const violations: string[] = [];

/**
 * Checks a response from a partner route (`/api/...`) or an ops route (`/ops/...`) against the
 * generated documents and records any violation; `takeContractViolations()` (run after every
 * test by the jest setup) fails the test that received it.
 */
export function checkAgainstDocument(
  method: string,
  url: string,
  status: number,
  contentType: string,
  body: unknown,
): void {
  checks ??= {
    partner: new DocumentCheck(partnerDocument(), '/api'),
    ops: new DocumentCheck(opsDocument(), '/ops'),
  };
  const path = new URL(url).pathname;
  const found =
    checks.partner.check(method, path, status, contentType, body) ??
    checks.ops.check(method, path, status, contentType, body);
  if (found) violations.push(...found);
}

export function takeContractViolations(): string[] {
  return violations.splice(0, violations.length);
}
