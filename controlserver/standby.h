// The spare Control Server. As a standby (--standby-of) it is an ordinary DIALOG process of the
// primary (named DIALOG.Standby.<port>, the port it takes over on) and takes over when the primary
// is gone, with a term above the primary's. What a serving server does about other servers (its
// standby taking over, a server of a higher term) is Fencing's.
#pragma once

#include "servercontext.h"

#include "dialog/client.h"

#include <QObject>
#include <memory>

namespace dialog::cs {

class Standby : public QObject
{
    Q_OBJECT
public:
    explicit Standby(ServerContext &context, QObject *parent = nullptr);
    ~Standby() override;

    /// Watches the primary (options.standbyOf) until it is gone, then emits takeOver().
    void watchPrimary();
    /// The term to serve with after the takeover: one above the primary's (as it last said) and
    /// above the configured one.
    quint64 takeOverTerm() const;

    /// The arguments of this server as the standby of the server at @p at: @p arguments (without
    /// the program) without their --standby-of and --port, then --port @p port --standby-of @p at;
    /// with a @p term, without their --term and then --term @p term (the term it knew stays known
    /// across the exec: a takeover then serves above it).
    static QStringList standbyArguments(QStringList arguments, quint16 port, const QString &at,
                                        quint64 term = 0);

Q_SIGNALS:
    /// The primary is gone: this server must serve now. Emitted at most once.
    void takeOver();

private:
    ServerContext &m_ctx;
    std::unique_ptr<Client> m_primaryWatch;
    quint64 m_primaryTerm = 0; // the primary's term, from its SUCCESSFULLY_CONNECTED
};

} // namespace dialog::cs
