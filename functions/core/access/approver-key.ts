import type { Gate } from '../config/index.ts';

const ASSUMED_ROLE = /^(arn:aws[\w-]*):sts::(\d{12}):assumed-role\/([^/]+)\/(.+)$/;
const FEDERATED = /^(arn:aws[\w-]*):sts::(\d{12}):federated-user\/.+$/;
const USER = /^arn:(aws[\w-]*):iam::\d{12}:user\/(?:.*\/)?([^/]+)$/;
/** A role as Systems Manager records a runbook's approver (the ARN its Approvers list names, path and all). */
const ROLE = /^(arn:aws[\w-]*):iam::(\d{12}):role\/(?:.*\/)?([^/]+)$/;

/**
 * Who an approval counts as: a key the approver cannot choose. A role session's name is picked by
 * whoever assumes the role, so a role counts once, whatever its sessions are called: except an IAM
 * Identity Center role (`AWSReservedSSO_*`, whose session name AWS sets to the signed-in user) and
 * roles the gate lists in `sessionNamedRoles` (whose trust policy ties the session name to the
 * person, e.g. `sts:RoleSessionName` = `${aws:username}`). Their session name names a person, and
 * so does an IAM user's name: each counts as that person (`<partition>:person/<name>`), whichever
 * role, permission set, account or user they came through, so carol as her IAM user and carol as a
 * session-named role's session are one approver, and one pusher. (Two people of one name in
 * different accounts count once: a third approver is asked for, never one too few.) Root is its
 * ARN. Federated users (GetFederationToken names them as it likes) count once per account. A
 * role's own ARN (how Systems Manager may record a runbook approver) is that role whatever its
 * path, as its sessions are: a session's ARN shows no path, so keeping it would count one role twice.
 */
export function approverKey(arn: string, gate: Pick<Gate, 'sessionNamedRoles'>): string {
  // IAM names users and roles without regard to case (and Identity Center its user names), so
  // one principal written in two cases is one approver.
  return keyOf(arn, gate).toLowerCase();
}

function keyOf(arn: string, gate: Pick<Gate, 'sessionNamedRoles'>): string {
  const role = ASSUMED_ROLE.exec(arn);
  if (role) {
    const [, partition, account, name, session] = role;
    const roleArn = `${partition}:iam::${account}:role/${name}`;
    // The person the session name names, whatever role, permission set or account they came through.
    if (name!.startsWith('AWSReservedSSO_') || namesPeople(gate, account!, name!))
      return personKey(partition!.slice('arn:'.length), session!);
    return roleArn;
  }
  const user = USER.exec(arn);
  if (user) return personKey(user[1]!, user[2]!);
  const federated = FEDERATED.exec(arn);
  if (federated) return `${federated[1]}:sts::${federated[2]}:federated-user`;
  const listed = ROLE.exec(arn);
  if (listed) return `${listed[1]}:iam::${listed[2]}:role/${listed[3]}`;
  return arn;
}

/** One person, named by an IAM user name or a session name that names people. */
const personKey = (partition: string, name: string) => `${partition}:person/${name}`;

/** True when the gate lists the role by an ARN of the same account and name (any path). */
function namesPeople(gate: Pick<Gate, 'sessionNamedRoles'>, account: string, name: string): boolean {
  return (gate.sessionNamedRoles ?? []).some((listed) => {
    const arn = /^arn:aws[\w-]*:iam::(\d{12}):role\/(?:.*\/)?([^/]+)$/.exec(listed);
    return arn !== null && arn[1] === account && arn[2]!.toLowerCase() === name.toLowerCase();
  });
}

const SESSION = /^arn:(aws[\w-]*):sts::(\d{12}):assumed-role\/([^/]+)\/.+$/;
const ROLE_OF = /^arn:(aws[\w-]*):iam::(\d{12}):role\/(?:.*\/)?([^/]+)$/;
const FEDERATED_OF = /^arn:(aws[\w-]*):sts::(\d{12}):federated-user\/.+$/;
/** Who may call GetFederationToken: an IAM user, or the account's root. */
const FEDERATOR = /^arn:(aws[\w-]*):iam::(\d{12}):(?:user\/.+|root)$/;

/**
 * True when two principals whose approver keys differ may still be one person:
 * - a role's own ARN (how Systems Manager may record a runbook approver: the role its Approvers
 *   list names, whoever of its people signalled) and a session of that role, whose key differs
 *   when the role's sessions name people (Identity Center, sessionNamedRoles); and, when they do,
 *   that role's ARN and any principal that counts as a person (an IAM user, a person-named
 *   session): whoever signalled may have been them;
 * - a federated user (GetFederationToken, which any IAM user or the root of the account may call,
 *   naming the federated user as it likes; STS does not say who) and an IAM user or the root of
 *   the same account.
 */
export function mayBeOnePerson(a: string, b: string, gate: Pick<Gate, 'sessionNamedRoles'>): boolean {
  return oneWay(a, b, gate) || oneWay(b, a, gate);
}

function oneWay(a: string, b: string, gate: Pick<Gate, 'sessionNamedRoles'>): boolean {
  const key = (arn: string, form: RegExp) => {
    const match = form.exec(arn);
    return match ? [match[1], match[2], match[3]?.toLowerCase()].join(' ') : undefined;
  };
  const role = ROLE_OF.exec(a);
  if (role) {
    if (key(a, ROLE_OF) === key(b, SESSION)) return true;
    const [, partition, account, name] = role;
    const namesPersons = name!.startsWith('AWSReservedSSO_') || namesPeople(gate, account!, name!);
    return namesPersons && approverKey(b, gate).startsWith(`${partition!.toLowerCase()}:person/`);
  }
  const federated = key(a, FEDERATED_OF);
  return federated !== undefined && federated === key(b, FEDERATOR);
}
