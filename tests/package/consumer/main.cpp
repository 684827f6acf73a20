// Built against an installed libdialog (find_package(Dialog) or pkg-config): creates a client
// (never started: no traffic), hands a call to its own thread through dialog/handoff.h and prints
// the library's version.
#include <dialog/client.h>
#include <dialog/handoff.h>
#include <dialog/version.h>

#include <QCoreApplication>
#include <cstdio>
#include <cstring>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    dialog::Client client(dialog::ClientOptions::fromEnvironment(QStringLiteral("PackageCheck")));
    std::printf("%s %s: libdialog %s, headers %s\n", client.metaObject()->className(),
                qPrintable(client.name()), dialog::version(), DIALOG_VERSION_STRING);
#ifdef DIALOG_DATA_DIR
    std::printf("data %s\n", DIALOG_DATA_DIR);
#endif
    bool posted = false;
    dialog::handoff::post(&client, [&posted] { posted = true; }); // its own thread: run at once
    if (!posted) {
        std::fprintf(stderr, "consumer: dialog::handoff::post() did not run the call\n");
        return 1;
    }
    if (std::strcmp(dialog::version(), DIALOG_VERSION_STRING) != 0) {
        std::fprintf(stderr, "consumer: libdialog %s does not match its headers %s\n", dialog::version(),
                     DIALOG_VERSION_STRING);
        return 1;
    }
    return 0;
}
