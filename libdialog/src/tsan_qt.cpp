// ThreadSanitizer builds only (DIALOG_SANITIZE=thread): Qt's queued signals, made visible.
//
// A signal connected to an object of another thread is delivered as an event: Qt posts it to the
// receiving thread's queue under that queue's mutex and delivers it after taking the same mutex,
// both inside libQt6Core, which is not instrumented. TSan therefore sees no order between what the
// emitting thread did before the emit and what the slot does with it, and reports every such pair
// (the arguments, the objects they point to, the event itself when it is freed) as a race.
//
// This unit tells TSan what Qt guarantees, through two hooks Qt offers for tools (both in libQt6Core
// since Qt 4): the signal spy callback, called in the emitting thread before any connection is
// served, releases the sender's address; the event notification callback, called in the receiving
// thread before an event is delivered, acquires it for a queued call that names its sender. The
// order is the one Qt gives — emit, then delivery of that emit — keyed by sender, so emits of
// different objects stay unordered and races between them stay visible. Queued calls without a
// sender (QMetaObject::invokeMethod) carry their own annotation (handoff::handOff(), dialog/handoff.h).
#include "dialog/handoff.h"

#ifdef DIALOG_TSAN

#include <QCoreApplication>
#include <QEvent>
#include <QtCore/private/qobject_p.h>

// ThreadSanitizer's run-time (not in its public header): reads between these two are not checked.
extern "C" void AnnotateIgnoreReadsBegin(const char *file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char *file, int line);

namespace {

void signalBegin(QObject *sender, int, void **)
{
    __tsan_release(sender);
}

bool eventDelivered(void **data)
{
    // { receiver, event, &result }: see QCoreApplication::notifyInternal2(). The event was made by
    // the posting thread, and what orders that before this read is what is acquired below: the
    // two reads that find the sender are not checked.
    const auto *event = static_cast<const QEvent *>(data[1]);
    const QObject *sender = nullptr;
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    if (event && event->type() == QEvent::MetaCall)
        sender = static_cast<const QAbstractMetaCallEvent *>(event)->sender();
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    if (sender)
        __tsan_acquire(const_cast<QObject *>(sender));
    return false; // never consumes the event
}

QSignalSpyCallbackSet callbacks = {signalBegin, nullptr, nullptr, nullptr};

[[maybe_unused]] const bool installed = [] {
    qt_register_signal_spy_callbacks(&callbacks);
    return QInternal::registerCallback(QInternal::EventNotifyCallback, eventDelivered);
}();

} // namespace

#endif
