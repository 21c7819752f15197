#include "ui/stream_picker.hpp"

#include <algorithm>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QNetworkInterface>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

namespace j2k::ui {

std::vector<NetworkInterfaceChoice> list_ipv4_interfaces() {
  std::vector<NetworkInterfaceChoice> out;
  out.push_back({QStringLiteral("any (the system's default route)"), QString()});
  for (const QNetworkInterface& nif : QNetworkInterface::allInterfaces()) {
    if (!(nif.flags() & QNetworkInterface::IsUp)) continue;
    for (const QNetworkAddressEntry& entry : nif.addressEntries()) {
      if (entry.ip().protocol() != QAbstractSocket::IPv4Protocol) continue;
      const QString address = entry.ip().toString();
      out.push_back({QStringLiteral("%1 — %2").arg(nif.humanReadableName(), address), address});
    }
  }
  return out;
}

QString with_interface(const QString& url, const QString& address) {
  if (address.isEmpty() || url.startsWith(QStringLiteral("pcap:")) || url == QStringLiteral("demo") ||
      url.startsWith(QStringLiteral("demo:")) || url.startsWith(QStringLiteral("demo?")))
    return url;
  const qsizetype q = url.indexOf('?');
  QString base = q < 0 ? url : url.left(q);
  QStringList items = q < 0 ? QStringList() : url.mid(q + 1).split('&', Qt::SkipEmptyParts);
  items.erase(std::remove_if(items.begin(), items.end(), [](const QString& i) { return i.startsWith(QStringLiteral("iface=")); }),
              items.end());
  items.push_back(QStringLiteral("iface=") + address);
  return base + '?' + items.join('&');
}

StreamPicker::StreamPicker(const QStringList& recent, Check check, QWidget* parent) : QDialog(parent), check_(std::move(check)) {
  setWindowTitle(QStringLiteral("j2kplay — open a stream"));
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  url_edit_ = new QLineEdit(this);
  url_edit_->setPlaceholderText(QStringLiteral("rtp://239.1.1.1:5004   or   sdp:/path/stream.sdp   or   pcap:capture.pcapng?port=5004"));
  url_edit_->setMinimumWidth(520);
  auto* row = new QHBoxLayout;
  row->addWidget(url_edit_);
  auto* sdp_button = new QPushButton(QStringLiteral("SDP file…"), this);
  row->addWidget(sdp_button);
  form->addRow(QStringLiteral("Stream:"), row);
  interfaces_ = new QComboBox(this);
  choices_ = list_ipv4_interfaces();
  for (const auto& c : choices_) interfaces_->addItem(c.label);
  form->addRow(QStringLiteral("Interface:"), interfaces_);
  layout->addLayout(form);
  layout->addWidget(new QLabel(QStringLiteral("Recent streams (double-click to play):"), this));
  recent_ = new QListWidget(this);
  recent_->addItems(recent);
  layout->addWidget(recent_);
  error_ = new QLabel(this);
  error_->setWordWrap(true);
  error_->setStyleSheet(QStringLiteral("color: #c0392b"));
  error_->hide();
  layout->addWidget(error_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
  layout->addWidget(buttons);

  connect(sdp_button, &QPushButton::clicked, this, [this] {
    const QString file = QFileDialog::getOpenFileName(this, QStringLiteral("Session description"), QString(),
                                                      QStringLiteral("SDP files (*.sdp);;All files (*)"));
    if (!file.isEmpty()) url_edit_->setText(QStringLiteral("sdp:") + file);
  });
  connect(recent_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) { url_edit_->setText(item->text()); });
  connect(recent_, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem* item) { open(item->text()); });
  connect(buttons, &QDialogButtonBox::accepted, this, [this] { try_accept(); });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

void StreamPicker::try_accept() {
  if (url_edit_->text().trimmed().isEmpty()) return;
  const QString why = check_ ? check_(url()) : QString();
  if (why.isEmpty()) {
    error_->hide();
    error_->clear();
    accept();
    return;
  }
  error_->setText(why);
  error_->show();
  url_edit_->setFocus();
}

bool StreamPicker::open(const QString& text) {
  url_edit_->setText(text);
  try_accept();
  return result() == QDialog::Accepted;
}

QString StreamPicker::error() const { return error_->text(); }

QString StreamPicker::url() const {
  const int i = interfaces_->currentIndex();
  const QString address = i >= 0 && i < static_cast<int>(choices_.size()) ? choices_[static_cast<std::size_t>(i)].address : QString();
  return with_interface(url_edit_->text().trimmed(), address);
}

QStringList load_recent_streams() {
  QSettings settings(QStringLiteral("j2kplay"), QStringLiteral("j2kplay"));
  return settings.value(QStringLiteral("recent")).toStringList();
}

void remember_stream(const QString& url) {
  QSettings settings(QStringLiteral("j2kplay"), QStringLiteral("j2kplay"));
  QStringList recent = settings.value(QStringLiteral("recent")).toStringList();
  recent.removeAll(url);
  recent.prepend(url);
  while (recent.size() > 10) recent.removeLast();
  settings.setValue(QStringLiteral("recent"), recent);
}

}  // namespace j2k::ui
