// dialogctl up: the partition's secret, made when it names none, and the identities of its
// processes (docs/security.md).
#pragma once

#include "dialog/rc/partition.h"

#include <QString>

namespace dialog::tool {

class Launcher;

/// Gives @p p the secret dialogctl up chooses when it names none (and does not say "secret":
/// "none"), and the identity secret of a partition with a secret and a Control Server of its own,
/// both in @p runDir. True when the secret is the chosen one (not the partition's "secret_file").
bool secureByDefault(rc::Partition &p, const QString &runDir);
/// Makes the secret file of @p p where it is missing (@p chosen: the one secureByDefault() chose,
/// which is also copied to every other host). Empty, or why not.
QString ensureSecret(const rc::Partition &p, bool chosen, const Launcher &launcher);
/// Makes the identity secret and the key of every process on its host. A process on another host
/// that cannot be given its key (no ssh to it: a host reached through its agent only) is named in
/// @p p's unprovenNames, with a warning. Empty, or why not.
QString ensureIdentities(rc::Partition &p, const Launcher &launcher);
/// For a partition with an access list and a run-control tree: writes <@p runDir>/access.json, the
/// list with a rule first for each segment letting its parent controller send the run-control
/// commands of the segment's children (the reset of orphans, docs/rctree.md), and gives it to @p p
/// in place of its own. Left as it is, with a warning, when a process reading the list runs on
/// another host (the file is written on this one). False with @p error if the list cannot be read
/// or the file written.
bool addControllerRules(rc::Partition &p, const QString &runDir, QString *error);
/// @p s as one word of a shell command line.
QString shellWord(const QString &s);

} // namespace dialog::tool
