// What a process needs to take part in a protected partition: the shared secret (--secret-file,
// $DIALOG_SECRET_FILE) and its TLS files (--tls-cert, --tls-key, --tls-ca, $DIALOG_TLS_*).
#pragma once

#include "dialog/status.h"

#include <QByteArray>
#include <QString>

class QSslConfiguration;

namespace dialog::security {

/// Longest secret file accepted; a secret is a few dozen random bytes, a larger file is a mistake.
constexpr qint64 MaxSecretFileBytes = 4096;
/// Shortest secret accepted (bytes after trimming): a guessable secret protects nothing.
constexpr qint64 MinSecretBytes = 16;

/// Reads the shared secret from @p path: the file's content with surrounding white space trimmed
/// (so `head -c 32 /dev/urandom | base64 > secret` works). Status::Code::SecurityError, with the
/// path and the reason, when the file cannot be read, is larger than MaxSecretFileBytes, or holds
/// fewer than MinSecretBytes; @p secret is then unchanged. A secret that secretWeakness() finds
/// weak is accepted with a warning (category dialog.security) that says how to make a strong one.
Status readSecretFile(const QString &path, QByteArray *secret);

/// Bits of entropy a secret should have at least: one handshake lets an observer test guesses
/// offline, so the secret must be out of reach of guessing, not merely of typing.
constexpr int StrongSecretBits = 128;
/// A generous estimate of the bits of entropy of @p secret: its length times the bits per byte of
/// the character classes it uses (8 for binary bytes), and no more than 2.5 bits per byte for text
/// of one letter case (words and names, such as `daqpartition2026`). Random secrets of 128 bits
/// or more in hex, base64 or binary estimate at least StrongSecretBits.
int estimatedSecretBits(const QByteArray &secret);
/// Empty when @p secret is estimated at StrongSecretBits or more; else why it looks weak, with how
/// to make a strong one (`dialogctl secret generate`).
QString secretWeakness(const QByteArray &secret);
/// A new secret: 32 bytes of the system's random generator in base64 (44 characters).
QByteArray generateSecret();

/// The TLS files of a process: all three given, or none.
struct TlsFiles
{
    QString cert; ///< PEM certificate of this process
    QString key;  ///< PEM private key of that certificate (RSA or EC, unencrypted)
    QString ca;   ///< PEM certificate(s) of the authority peers' certificates must be signed by
    /// True when none of the three files is given (plain TCP).
    bool isEmpty() const { return cert.isEmpty() && key.isEmpty() && ca.isEmpty(); }
};

/// Loads @p files into @p out for mutual authentication: this process presents its certificate,
/// and a peer must present one signed by the given authority (and only by it).
/// Status::Code::SecurityError, with the file and the reason, when a file is missing, unreadable
/// or not PEM, or only some of the three are given (a key that does not match its certificate
/// fails at the first TLS handshake).
Status tlsConfiguration(const TlsFiles &files, QSslConfiguration *out);

// The challenge-response of a connection (docs/protocol.md, "Authentication"): each side sends a
// fresh nonce, each proves the secret with an HMAC-SHA256 over both nonces and the connecting
// side's HELLO, with a label of its role so that a proof is never valid for the other role.

/// Bytes of a nonce.
constexpr qsizetype NonceBytes = 32;
/// A fresh nonce from the system's random generator.
QByteArray newNonce();
enum class Role
{
    Acceptor, ///< the side that accepted the connection (it proves first)
    Connector ///< the side that opened it
};
/// HMAC-SHA256(secret, "DIALOG-AUTH-1 acceptor\n" or "DIALOG-AUTH-1 connector\n" || @p connectorNonce
/// || @p acceptorNonce || @p hello).
QByteArray proof(const QByteArray &secret, Role role, const QByteArray &connectorNonce,
                 const QByteArray &acceptorNonce, const QByteArray &hello);
/// Compares two proofs in a time that does not depend on where they differ.
bool proofsEqual(const QByteArray &a, const QByteArray &b);

// Per-process identities (docs/security.md, "Identities"): the Control Server holds the partition's
// identity secret (--identity-file), which no other process has; `dialogctl up` derives from it a key
// for each process it starts and hands the process its own key only. The process proves its name
// with that key in its AUTH (Auth.identity), the Control Server checks it, and a process that holds
// the key of one name cannot prove another.

/// The key of process @p name: HMAC-SHA256(@p identitySecret, "DIALOG-PROCESS-KEY-1\n" || name).
QByteArray processKey(const QByteArray &identitySecret, const QString &name);
/// The connector's proof of its name with its @p key: HMAC-SHA256(key, "DIALOG-IDENTITY-1\n" ||
/// @p connectorNonce || @p acceptorNonce || @p hello), the nonces and HELLO of the handshake.
QByteArray identityProof(const QByteArray &key, const QByteArray &connectorNonce,
                         const QByteArray &acceptorNonce, const QByteArray &hello);
/// The text of a process key file: the process's name on the first line, its key in base64 on the
/// second.
QByteArray processKeyFileContent(const QString &name, const QByteArray &key);
/// Reads a process key file ($DIALOG_PROCESS_KEY_FILE) into @p name and @p key.
/// Status::Code::SecurityError, with the path and the reason, when it cannot be read or is not a
/// name and a 32-byte key.
Status readProcessKeyFile(const QString &path, QString *name, QByteArray *key);

} // namespace dialog::security
