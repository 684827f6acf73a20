#include "protocol_p.h"

#include <QtEndian>
#include <cstring>

namespace dialog::is::protocol {

namespace {
template <typename T> void put(QByteArray &out, T v)
{
    const T le = qToLittleEndian(v);
    out.append(reinterpret_cast<const char *>(&le), sizeof le);
}
template <typename T> T get(const char *p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return qFromLittleEndian(v);
}
} // namespace

void appendRecord(QByteArray &out, quint8 kind, QByteArrayView name, QByteArrayView type, qint64 timeUs,
                  QByteArrayView value)
{
    out.reserve(out.size() + RecordOverhead + name.size() + type.size() + value.size());
    out.append(char(kind));
    put<quint16>(out, quint16(name.size()));
    out.append(name.data(), name.size());
    put<quint16>(out, quint16(type.size()));
    out.append(type.data(), type.size());
    put<qint64>(out, timeUs);
    put<quint32>(out, quint32(value.size()));
    out.append(value.data(), value.size());
}

Status nextRecord(QByteArrayView batch, qsizetype &pos, RecordView &out)
{
    const qsizetype size = batch.size();
    const char *p = batch.data();
    const auto bad = [&](const char *why) {
        const Status st(Status::Code::ProtocolError,
                        QStringLiteral("malformed IS notification at byte %1: %2").arg(pos).arg(QLatin1String(why)));
        pos = size;
        return st;
    };
    if (pos >= size)
        return bad("no record at the end of the batch");
    qsizetype i = pos;
    if (size - i < 3)
        return bad("truncated header");
    out.kind = quint8(p[i]);
    out.nameLength = get<quint16>(p + i + 1);
    i += 3;
    if (size - i < out.nameLength + 2)
        return bad("truncated name");
    out.nameOffset = qint32(i);
    i += out.nameLength;
    out.typeLength = get<quint16>(p + i);
    i += 2;
    if (size - i < out.typeLength + 12)
        return bad("truncated type");
    out.typeOffset = qint32(i);
    i += out.typeLength;
    out.timeUs = get<qint64>(p + i);
    const quint32 vlen = get<quint32>(p + i + 8);
    i += 12;
    if (quint64(size - i) < vlen)
        return bad("truncated value");
    out.valueOffset = qint32(i);
    out.valueLength = qint32(vlen);
    pos = i + vlen;
    return {};
}

Status statusFromReply(const isproto::Reply &reply)
{
    const quint32 c = reply.code();
    // Codes an IS server sends: those up to ServerError, and QuotaExceeded and PermissionDenied
    // (added later).
    const auto code = c <= quint32(Status::Code::ServerError) || c == quint32(Status::Code::QuotaExceeded) ||
                              c == quint32(Status::Code::PermissionDenied)
                          ? Status::Code(c)
                          : Status::Code::ServerError;
    return Status(code, QString::fromStdString(reply.error()));
}

void toProto(const Criteria &c, isproto::Criteria *out)
{
    out->set_regex(c.regex().toStdString());
    out->set_type(c.type().toStdString());
    out->set_selector(quint32(c.selector()));
    out->set_logic(quint32(c.logic()));
}

Criteria fromProto(const isproto::Criteria &c)
{
    const auto sel = c.selector() <= quint32(Criteria::TypeSelector::NotWithSubtypes)
                         ? Criteria::TypeSelector(c.selector())
                         : Criteria::TypeSelector::Any;
    return Criteria(QString::fromStdString(c.regex()), QString::fromStdString(c.type()), sel,
                    c.logic() == 1 ? Criteria::Logic::Or : Criteria::Logic::And);
}

QByteArray serialize(const google::protobuf::MessageLite &message)
{
    QByteArray out(qsizetype(message.ByteSizeLong()), Qt::Uninitialized);
    message.SerializeToArray(out.data(), int(out.size()));
    return out;
}

void toProto(const History &history, isproto::Reply *out)
{
    out->set_type(history.typeName.toStdString());
    out->set_oldest_us(history.oldest.microsecondsSinceEpoch());
    out->set_oldest_count(history.oldestCount);
    for (const HistorySeries &s : history.series) {
        isproto::Series *ps = out->add_series();
        ps->set_attribute(s.attribute.toStdString());
        const int n = int(s.points.size());
        ps->mutable_time_us()->Reserve(n);
        ps->mutable_value()->Reserve(n);
        bool raw = true;
        for (const HistoryPoint &p : s.points) {
            ps->add_time_us(p.time.microsecondsSinceEpoch());
            ps->add_value(p.value);
            raw = raw && p.count == 1 && p.min == p.value && p.max == p.value;
        }
        if (raw)
            continue; // min, max and count are implied
        for (const HistoryPoint &p : s.points) {
            ps->add_min(p.min);
            ps->add_max(p.max);
            ps->add_count(p.count);
        }
    }
}

History historyFromProto(const isproto::Reply &reply)
{
    History h;
    h.typeName = QString::fromStdString(reply.type());
    h.oldest = Time(reply.oldest_us());
    h.oldestCount = reply.oldest_count();
    for (const isproto::Series &ps : reply.series()) {
        HistorySeries s;
        s.attribute = QString::fromStdString(ps.attribute());
        const int n = qMin(ps.time_us_size(), ps.value_size());
        const bool full = ps.min_size() == n && ps.max_size() == n && ps.count_size() == n;
        s.points.reserve(n);
        for (int i = 0; i < n; ++i) {
            const double v = ps.value(i);
            s.points.append(HistoryPoint{Time(ps.time_us(i)), v, full ? ps.min(i) : v, full ? ps.max(i) : v,
                                         full ? ps.count(i) : 1u});
        }
        h.series.append(s);
    }
    return h;
}

} // namespace dialog::is::protocol

namespace dialog::is::protocol {

bool parseRequest(QByteArrayView bytes, RequestMessage *out)
{
    isproto::Request r;
    if (!r.ParseFromArray(bytes.data(), int(bytes.size())))
        return false;
    RequestMessage m;
    m.op = RequestMessage::Op(r.op());
    m.name = QString::fromStdString(r.name());
    m.type = QString::fromStdString(r.type());
    m.value = QByteArray::fromStdString(r.value());
    // A criteria compiles a regular expression: only for the operations that read it.
    if (m.op == RequestMessage::Op::List || m.op == RequestMessage::Op::Subscribe)
        m.criteria = fromProto(r.criteria());
    m.withValues = r.with_values();
    m.channel = QString::fromStdString(r.channel());
    m.typesJson = QByteArray::fromStdString(r.types_json());
    m.snapshot = r.snapshot();
    m.attribute = QString::fromStdString(r.attribute());
    m.fromUs = r.from_us();
    m.toUs = r.to_us();
    m.maxPoints = r.max_points();
    m.archiveService = QString::fromStdString(r.archive_service());
    m.historyUs = r.history_us();
    m.staleOnly = r.stale_only();
    *out = std::move(m);
    return true;
}

QByteArray serializeReply(const ReplyMessage &reply)
{
    isproto::Reply out;
    out.set_code(quint32(reply.code));
    if (!reply.error.isEmpty())
        out.set_error(reply.error.toStdString());
    for (const EntryMessage &e : reply.entries) {
        isproto::Entry *p = out.add_entries();
        p->set_name(e.name.toStdString());
        p->set_type(e.type.toStdString());
        p->set_time_us(e.time.microsecondsSinceEpoch());
        p->set_update_count(e.updateCount);
        p->set_writer_lost(e.staleness.writerLost);
        p->set_overdue(e.staleness.overdue);
        p->set_age_us(e.staleness.ageUs);
        p->set_expected_interval_s(e.staleness.expectedIntervalS);
        if (!e.value.isEmpty())
            p->set_value(e.value.constData(), size_t(e.value.size()));
    }
    if (!reply.typesJson.isEmpty())
        out.set_types_json(reply.typesJson.constData(), size_t(reply.typesJson.size()));
    toProto(reply.history, &out);
    if (!reply.archiveService.isEmpty())
        out.set_archive_service(reply.archiveService.toStdString());
    return serialize(out);
}

} // namespace dialog::is::protocol
