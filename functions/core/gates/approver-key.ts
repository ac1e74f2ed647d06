import type { Gate } from '../config/index.ts';

const ASSUMED_ROLE = /^(arn:aws[\w-]*):sts::(\d{12}):assumed-role\/([^/]+)\/(.+)$/;
const FEDERATED = /^(arn:aws[\w-]*):sts::(\d{12}):federated-user\/.+$/;
/** A role as Systems Manager records a runbook's approver (the ARN its Approvers list names, path and all). */
const ROLE = /^(arn:aws[\w-]*):iam::(\d{12}):role\/(?:.*\/)?([^/]+)$/;

/**
 * Who an approval counts as: a key the approver cannot choose. An IAM user (or root) is its ARN.
 * A role session's name is picked by whoever assumes the role, so a role counts once, whatever
 * its sessions are called: except an IAM Identity Center role (`AWSReservedSSO_*`, whose session
 * name AWS sets to the signed-in user, who counts once across permission sets and accounts) and
 * roles the gate lists in `sessionNamedRoles` (whose trust policy ties the session name to the
 * person), which count per session. Federated users
 * (GetFederationToken names them as it likes) count once per account. A role's own ARN (how
 * Systems Manager may record a runbook approver) is that role whatever its path, as its sessions
 * are: a session's ARN shows no path, so keeping it would count one role twice.
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
    // The signed-in user, whatever permission set or account they came through: one person.
    if (name!.startsWith('AWSReservedSSO_')) return `${partition}:identity-center-user/${session}`;
    return namesPeople(gate, account!, name!) ? `${roleArn} session ${session}` : roleArn;
  }
  const federated = FEDERATED.exec(arn);
  if (federated) return `${federated[1]}:sts::${federated[2]}:federated-user`;
  const listed = ROLE.exec(arn);
  if (listed) return `${listed[1]}:iam::${listed[2]}:role/${listed[3]}`;
  return arn;
}

/** True when the gate lists the role by an ARN of the same account and name (any path). */
function namesPeople(gate: Pick<Gate, 'sessionNamedRoles'>, account: string, name: string): boolean {
  return (gate.sessionNamedRoles ?? []).some((listed) => {
    const arn = /^arn:aws[\w-]*:iam::(\d{12}):role\/(?:.*\/)?([^/]+)$/.exec(listed);
    return arn !== null && arn[1] === account && arn[2]!.toLowerCase() === name.toLowerCase();
  });
}
