#pragma once
// What j2kplay shows when started without a URL: a small dialog to type a URL or pick an
// SDP file, choose the network interface by name and address, or reopen a recent stream.
// The dialog only builds a URL string; j2kplay parses and plays it as if it had been given
// on the command line (so the same errors appear either way).
#include <QDialog>
#include <QString>
#include <QStringList>
#include <functional>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;

namespace j2k::ui {

struct NetworkInterfaceChoice {
  QString label;    ///< "eth0 — 192.168.1.10"
  QString address;  ///< "192.168.1.10" (empty: let the system choose)
};

/// The machine's IPv4 interfaces that are up, loopback included (for local tests).
std::vector<NetworkInterfaceChoice> list_ipv4_interfaces();

/// `url` with `iface=ADDRESS` set (replacing one already there); captures and the built-in
/// demo, which read no network, are left as they are.
QString with_interface(const QString& url, const QString& address);

class StreamPicker : public QDialog {
 public:
  /// Why a URL cannot be played (empty: it can): j2kplay's own checks, so that a mistyped URL
  /// is said in the dialog, which stays open, rather than ending the program.
  using Check = std::function<QString(const QString& url)>;
  /// `recent`: URLs played before, newest first.
  explicit StreamPicker(const QStringList& recent, Check check = {}, QWidget* parent = nullptr);
  /// The URL to play (valid after exec() returned Accepted).
  QString url() const;
  /// Open `text` as if typed and confirmed: accepted when the check passes, otherwise the
  /// dialog shows why (error()) and stays open.
  bool open(const QString& text);
  QString error() const;

 private:
  void try_accept();
  QLineEdit* url_edit_ = nullptr;
  QComboBox* interfaces_ = nullptr;
  QListWidget* recent_ = nullptr;
  QLabel* error_ = nullptr;
  std::vector<NetworkInterfaceChoice> choices_;
  Check check_;
};

/// Recent streams kept with QSettings ("j2kplay/recent"), at most 10, newest first.
QStringList load_recent_streams();
void remember_stream(const QString& url);

}  // namespace j2k::ui
