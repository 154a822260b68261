/**
 * Node-side cleanup for DiskPressure, used by the built-in runbook and the analyzer's suggested
 * action. Runs in a privileged debug pod on the affected node with the host filesystem at /host,
 * and only deletes data the kubelet or the container runtime regenerates or no longer needs:
 * never the node's own logs (docs/decisions.md).
 */
export const NODE_DISK_CLEANUP_SCRIPT = `#!/bin/sh
set -eu
HOST=/host
echo "== usage before cleanup"
df -h "$HOST/var/lib" "$HOST/var/log"

# Rotated container logs: the kubelet only tails the current file, the rest is history.
find "$HOST/var/log/pods" -type f -name '*.log.*' -mmin +60 -print -delete

# Cap the systemd journal; it has no size limit on many node images.
chroot "$HOST" journalctl --vacuum-size=500M

# Images no container uses. The kubelet's image GC only starts at its high threshold and may lag.
chroot "$HOST" crictl rmi --prune

echo "== usage after cleanup"
df -h "$HOST/var/lib" "$HOST/var/log"
`;
