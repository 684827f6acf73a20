// Fencing: after any sequence of network partitions and heals, one Control Server serves. Every
// server serves with a term; a standby that takes over serves with one more than the highest it saw.
// A server learns of a higher term three ways, and steps down at once when the server of that term
// is there:
//   - a CONNECT carries the highest term the process was accepted with, and where (Connect.term);
//   - a server that took over keeps a watch (a Client) on the one it replaced, which carries its
//     own term in its CONNECT and reads the other's in SUCCESSFULLY_CONNECTED;
//   - a primary probes the address its standby would serve on, every heartbeat interval.
// Stepping down: CONNECTs are answered with a redirect, every connected process is sent a
// CONNECTION_LOST that redirects it (for several intervals, so that none is left), then the process
// executes itself again as the standby of the serving one. See docs/controlserver.md.
#pragma once

#include "servercontext.h"

#include "dialog/client.h"

#include <QObject>
#include <functional>
#include <memory>

class QTimer;

namespace dialog::cs {

/// Calls @p done once with whether something accepts TCP connections at @p at (an error or
/// @p timeoutMs without an answer: false). The probe belongs to @p owner.
void probeListening(QObject *owner, const net::Endpoint &at, int timeoutMs, std::function<void(bool)> done);

class Fencing : public QObject
{
    Q_OBJECT
public:
    explicit Fencing(ServerContext &context, QObject *parent = nullptr);
    ~Fencing() override;

    /// Serving now: from here on, the standby at @p standby (once known, standbyChanged()) is probed
    /// every heartbeat interval, and @p replaced (the server this one took over from; empty for a
    /// primary) is watched.
    void serving(const QString &replaced);
    /// Where this server's standby would serve (learned from its connection).
    void standbyKnown(const net::Endpoint &standby);
    /// This server did not run for a while: if its standby serves now, it steps down (nobody is
    /// declared lost while that is asked: probingChanged()).
    void afterStall();
    /// @p p connected: if it was accepted by a Control Server of a higher term, and that server is
    /// there, this one steps down; if it is not, this one serves on with a term above it.
    void admitted(const ProcessRecord &p);
    /// Steps down for the server at @p active (term @p term): redirects every process there, then
    /// becomes its standby. Idempotent.
    void stepDownTo(const net::Endpoint &active, quint64 term, const QString &why);

    /// Whether a server of term @p term outranks this one, of @p ownTerm: a higher term. (Two
    /// servers of one term: the one that watches the other goes above it.)
    static bool outranks(quint64 term, quint64 ownTerm);
    /// Whether @p e is where this server listens (its port, and one of its host's names or
    /// addresses): never a server to step down for.
    bool isSelf(const net::Endpoint &e) const;

Q_SIGNALS:
    /// Stepping down began: nobody is to be declared lost any more (they are leaving).
    void steppingDown();
    /// True while the standby is asked, after a stall, whether it took over.
    void probingChanged(bool probing);

private:
    /// Steps down if the standby listens (it took over); @p hold: emit probingChanged() meanwhile.
    void probeStandby(bool hold);
    void watch(const QString &replaced);
    /// The term of the server at @p server if it watches us with a term below ours (it then steps
    /// down for us, listening meanwhile), else 0.
    quint64 watchedBy(const net::Endpoint &server) const;
    void redirectAll();
    /// Executes this program again as the standby of the server at @p active (returns only if the
    /// exec failed; the process then exits).
    void becomeStandbyOf(const net::Endpoint &active);

    ServerContext &m_ctx;
    net::Endpoint m_standby;
    bool m_probing = false; // a probe of the standby is on its way
    bool m_holding = false; // ... and supervision waits for its answer (after a stall)
    QTimer *m_tick = nullptr;
    std::unique_ptr<Client> m_watch; // of the server this one took over from
    int m_redirectRounds = 0;
};

} // namespace dialog::cs
