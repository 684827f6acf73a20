// The spare Control Server and the primary's side of it. As a standby (--standby-of) it is an
// ordinary DIALOG process of the primary and takes over when the primary is gone. As the primary it
// remembers where its standby would serve (the standby connects as DIALOG.Standby.<port>), and
// after a pause of its own it asks whether the standby took over meanwhile: if so it steps down to
// be that server's standby, so that two servers never serve one partition.
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
    /// @p p connected: if it is our standby, where it would serve is remembered.
    void admitted(const ProcessRecord &p);
    /// This server did not run for a while: if its standby serves now, it steps down.
    void checkAfterStall();

    /// The arguments of this server as the standby of the server at @p at: @p arguments (without
    /// the program) without their --standby-of and --port, then --port @p port --standby-of @p at.
    static QStringList standbyArguments(QStringList arguments, quint16 port, const QString &at);

Q_SIGNALS:
    /// The primary is gone: this server must serve now. Emitted at most once.
    void takeOver();
    /// True while the standby is asked whether it took over (nobody is declared lost meanwhile).
    void probingChanged(bool probing);

private:
    /// Executes this program again as the standby of the server at @p active (it does not return
    /// unless the exec failed; then the process exits).
    void stepDown(const net::Endpoint &active);

    ServerContext &m_ctx;
    std::unique_ptr<Client> m_primaryWatch;
    net::Endpoint m_standby; // where our standby serves once it takes over (from its name)
    bool m_probing = false;
};

} // namespace dialog::cs
