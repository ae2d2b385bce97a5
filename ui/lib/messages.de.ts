// German texts; a key missing here falls back to English.
import type { MessageKey } from './messages.en.js';

export const de: Partial<Record<MessageKey, string>> = {
  'app.title': 'Anmelden',
  'lockout.way_out': 'Sie können sich weiterhin über Ihre E-Mail anmelden:',
  'brand.help': 'Brauchen Sie Hilfe?',
  'brand.contact': 'Support kontaktieren',
  'app.loading': 'Wird geladen…',
  'app.signing_in_to': 'Melden Sie sich an, um mit {client} fortzufahren',
  'app.registering_for': 'Erstellen Sie ein Konto, um mit {client} fortzufahren',
  'app.signing_in_account': 'Melden Sie sich an, um Ihr Konto zu verwalten',
  'app.registering_account': 'Erstellen Sie ein Konto und verwalten Sie es dann hier',
  'app.signed_in_as': 'Angemeldet als {name}',
  'app.cancel': 'Anmeldung abbrechen',
  'app.continue': 'Weiter',
  'app.redirecting': 'Angemeldet. Zurück zur Anwendung…',
  'app.returning': 'Zurück zur Anwendung…',
  'app.missing_transaction': 'Diese Seite muss über den Anmeldelink einer Anwendung geöffnet werden.',
  'app.no_screen':
    'Diese Anmeldung braucht einen Schritt, den diese Seite noch nicht anzeigen kann ({type}).',
  'app.try_again': 'Beginnen Sie erneut in der Anwendung.',
  'app.finished_elsewhere':
    'Sie sind angemeldet: Der Link aus Ihrer E-Mail hat diese Anmeldung in einem anderen Tab abgeschlossen. Sie können diesen Tab schließen.',

  'identify.title': 'Anmelden',
  'identify.identifier': 'E-Mail oder Benutzername',
  'identify.submit': 'Weiter',

  'password.title': 'Passwort eingeben',
  'password.identifier': 'E-Mail oder Benutzername',
  'password.password': 'Passwort',
  'password.submit': 'Anmelden',
  'password.failed': 'E-Mail, Benutzername oder Passwort ist nicht korrekt.',

  'session.remember': 'Auf diesem Gerät angemeldet bleiben',
  'session.transient': 'Gemeinsam genutztes Gerät: Anmeldung beim Schließen des Browsers beenden',

  'totp.title': 'Bestätigung in zwei Schritten',
  'totp.help': 'Geben Sie den 6-stelligen Code aus Ihrer Authenticator-App ein.',
  'totp.code': 'Authenticator-Code',
  'totp.submit': 'Bestätigen',
  'totp.failed':
    'Dieser Code ist nicht korrekt oder wurde bereits verwendet. Warten Sie auf den nächsten Code und versuchen Sie es erneut.',

  'recovery.title': 'Wiederherstellungscode verwenden',
  'recovery.help':
    'Geben Sie einen Ihrer gespeicherten Wiederherstellungscodes ein. Jeder Code gilt nur einmal.',
  'recovery.code': 'Wiederherstellungscode',
  'recovery.submit': 'Bestätigen',
  'recovery.failed': 'Dieser Wiederherstellungscode ist nicht korrekt oder wurde bereits verwendet.',
  'recovery.restricted':
    'Sie haben sich mit einem Wiederherstellungscode angemeldet: Richten Sie bald einen neuen Authenticator ein. Einige Änderungen bleiben bis dahin gesperrt.',

  'enroll.title': 'Bestätigung in zwei Schritten einrichten',
  'enroll.help':
    'Scannen Sie diesen QR-Code mit einer Authenticator-App (etwa Aegis, Google Authenticator oder 1Password).',
  'enroll.start': 'Authenticator-App einrichten',
  'enroll.intro':
    'Ihr Konto braucht bei der Anmeldung einen zweiten Schritt: einen Code aus einer Authenticator-App.',
  'enroll.qr_label': 'QR-Code für Ihre Authenticator-App',
  'enroll.manual': 'Scannen nicht möglich? Geben Sie diesen Schlüssel in der App ein:',
  'enroll.code': 'Code aus der App',
  'enroll.submit': 'Aktivieren',
  'enroll.failed':
    'Dieser Code passt nicht. Prüfen Sie die Uhrzeit Ihres Telefons und versuchen Sie den nächsten Code.',

  'codes.title': 'Wiederherstellungscodes speichern',
  'codes.help':
    'Falls Sie Ihr Telefon verlieren, erlaubt jeder dieser Codes eine Anmeldung. Sie werden nur jetzt angezeigt: Drucken Sie sie aus oder speichern Sie sie in einem Passwortmanager.',
  'codes.confirm': 'Ich habe diese Wiederherstellungscodes gespeichert',
  'codes.continue': 'Weiter',

  'update_password.title': 'Neues Passwort wählen',
  'update_password.help': 'Ihr Administrator bittet Sie, ein neues Passwort festzulegen.',
  'update_password.password': 'Neues Passwort',
  'update_password.submit': 'Passwort speichern',

  'organization.title': 'Organisation wählen',
  'organization.help': 'Bei welcher Organisation möchten Sie sich anmelden?',
  'organization.submit': 'Weiter',

  'account.title': 'Mit diesem Konto fortfahren?',
  'account.continue': 'Weiter als {name}',
  'account.other': 'Anderes Konto verwenden',

  'consent.title': 'Zugriff erlauben',
  'consent.help': '{client} bittet um Zugriff auf:',
  'consent.third_party':
    '{client} wird nicht vom Betreiber dieses Anmeldedienstes betrieben, sondern hat sich selbst registriert. Erlauben Sie den Zugriff nur, wenn Sie der Anwendung vertrauen.',
  'consent.approve': 'Erlauben',
  'consent.deny': 'Ablehnen',

  'alt.recovery_code': 'Stattdessen einen Wiederherstellungscode verwenden',
  'alt.totp': 'Stattdessen die Authenticator-App verwenden',
  'alt.identify': 'Anderes Konto verwenden',
  'alt.password': 'Mit Passwort anmelden',

  'scope.openid': 'Ihre Benutzerkennung',
  'scope.profile': 'Ihren Namen und Ihr Profil',
  'scope.email': 'Ihre E-Mail-Adresse',
  'scope.phone': 'Ihre Telefonnummer',
  'scope.offline_access': 'Zugriff, während Sie abwesend sind',

  'code.forbidden':
    'Diese Anmeldung kann in diesem Browser nicht fortgesetzt werden. Beginnen Sie erneut in der Anwendung.',
  'code.not_found':
    'Diese Anmeldung gibt es nicht oder sie ist beendet. Beginnen Sie erneut in der Anwendung.',
  'code.conflict':
    'Diese Anmeldung ist bereits beendet oder schon einen Schritt weiter. Laden Sie die Seite neu oder beginnen Sie erneut.',
  'code.invalid_request': 'Die Angaben wurden nicht angenommen. Prüfen Sie sie und versuchen Sie es erneut.',
  'code.password_reused':
    'Dieses Passwort wurde schon verwendet. Wählen Sie eines, das Sie für dieses Konto noch nicht verwendet haben.',
  'code.too_weak':
    'Dieses Passwort ist zu leicht zu erraten. Wählen Sie ein längeres, zum Beispiel einige Wörter ohne Zusammenhang.',
  'code.too_short': 'Dieses Passwort ist zu kurz. Verwenden Sie mindestens 8 Zeichen.',
  'code.validation_failed':
    'Die Angaben wurden nicht angenommen. Prüfen Sie sie und versuchen Sie es erneut.',
  'code.rate_limited': 'Zu viele Versuche. Warten Sie einen Moment und versuchen Sie es erneut.',
  'code.rate_limited_wait': 'Zu viele Versuche. Versuchen Sie es {when} erneut.',
  'code.temporarily_unavailable':
    'Der Dienst ist ausgelastet oder nicht verfügbar. Versuchen Sie es gleich erneut.',
  'code.request_timeout': 'Die Anfrage hat zu lange gedauert. Versuchen Sie es erneut.',
  'code.internal_error': 'Bei uns ist etwas schiefgelaufen. Versuchen Sie es erneut.',
  'code.network': 'Der Dienst ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  'code.expired':
    'Diese Anmeldung hat zu lange gedauert und ist abgelaufen. Beginnen Sie erneut in der Anwendung.',
  'code.too_many_failures': 'Zu viele Fehlversuche. Diese Anmeldung wurde beendet.',
  'code.access_denied': 'Der Zugriff wurde verweigert.',
  'code.account_unavailable':
    'Dieses Konto kann sich gerade nicht anmelden. Wenden Sie sich an Ihren Administrator.',
  'code.organization_access_denied': 'Sie können sich bei dieser Organisation nicht anmelden.',
  'code.no_organization': 'Ihr Konto gehört zu keiner Organisation, die diese Anwendung nutzen kann.',
  'code.login_method_not_allowed': 'Diese Anwendung verlangt eine Anmeldemethode, die Ihr Konto nicht hat.',
  'code.registration_pending_approval': 'Ihre Registrierung wartet auf Freigabe.',
  'code.guest_not_permitted': 'Gastkonten können sich hier nicht anmelden.',
  'code.authentication_policy_denied': 'Die Anmeldung wurde durch eine Richtlinie abgelehnt.',
  'code.connection_not_allowed': 'Diese Anmeldemethode ist hier nicht erlaubt.',
  'code.last_sign_in_method': 'Dies ist der letzte Weg, sich bei Ihrem Konto anzumelden; er bleibt bestehen.',
  'federation.title': 'Mit Ihrer Organisation anmelden',
  'federation.help': 'Ihre Organisation meldet Sie an. Weiter zu ihrer Anmeldeseite.',
  'federation.continue_with': 'Weiter mit {provider}',
  'federation.or': 'oder',
  'federation.leaving': 'Sie werden zu Ihrem Anmeldeanbieter weitergeleitet…',
  'notice.upstream_unavailable':
    'Der Anmeldeanbieter ist gerade nicht erreichbar. Versuchen Sie es gleich noch einmal oder melden Sie sich anders an.',
  'link.title': 'Konto verknüpfen',
  'link.help':
    'Sie haben sich mit {provider} angemeldet. Melden Sie sich hier einmal bei Ihrem Konto an, um beide zu verknüpfen; danach genügt {provider}.',
  'link.conflict':
    'Sie haben sich mit {provider} angemeldet, und es gibt schon ein Konto mit der Adresse {email}. Wenn es Ihres ist, melden Sie sich einmal dort an, um es mit {provider} zu verknüpfen.',
  'code.cancelled': 'Die Anmeldung wurde abgebrochen.',
  'code.unauthorized': 'Ihre Sitzung ist beendet. Melden Sie sich erneut an.',
  'code.recovery_restricted':
    'Diese Änderung ist nach einer Anmeldung mit Wiederherstellungscode gesperrt, bis Sie einen neuen Authenticator einrichten.',
  'code.unknown': 'Etwas ist schiefgelaufen ({code}).',

  'acct.title': 'Ihr Konto',
  'acct.loading': 'Sie werden angemeldet…',
  'acct.who': 'Angemeldet',
  'acct.name': 'Name',
  'acct.email': 'E-Mail',
  'acct.username': 'Benutzername',
  'acct.subject': 'Benutzer-ID',
  'acct.sessions': 'Ihre Sitzungen',
  'acct.session_started': 'Begonnen am {time}',
  'acct.session_seen': 'zuletzt aktiv am {time}',
  'acct.session_current': 'Dieser Browser',
  'acct.session_methods': 'Angemeldet mit: {methods}',
  'acct.end': 'Diese Sitzung beenden',
  'acct.end_all': 'Überall abmelden',
  'acct.ended_all': 'Sie sind überall abgemeldet.',
  'acct.sign_in': 'Anmelden',
  'acct.sign_in_again': 'Erneut anmelden',
  'acct.no_sessions': 'Keine aktiven Sitzungen.',
  'acct.failed': 'Anmeldung fehlgeschlagen: {reason}',
  'acct.linked': 'Verknüpfte Konten',
  'acct.no_linked': 'Es sind keine Konten anderer Anbieter verknüpft.',
  'acct.linked_since': 'verknüpft seit {time}',
  'acct.unlink': 'Entfernen',
  'otp.code': 'Code',
  'otp.submit': 'Bestätigen',
  'otp.resend': 'Neuen Code senden',
  'otp.failed': 'Der Code ist nicht korrekt oder abgelaufen.',
  'otp.email_title': 'Mit einem Code per E-Mail anmelden',
  'otp.email_send': 'Code per E-Mail senden',
  'otp.email_sent':
    'Wir haben einen 6-stelligen Code an Ihre E-Mail-Adresse gesendet. Geben Sie ihn hier ein.',
  'otp.sms_title': 'Mit einer SMS anmelden',
  'otp.sms_send': 'Code per SMS senden',
  'otp.sms_sent': 'Wir haben einen 6-stelligen Code an Ihr Telefon gesendet. Geben Sie ihn hier ein.',
  'verify.email_title': 'E-Mail-Adresse bestätigen',
  'verify.email_send': 'Bestätigungscode per E-Mail senden',
  'verify.phone_title': 'Telefonnummer bestätigen',
  'magic.title': 'Mit einem Link anmelden',
  'magic.help':
    'Wir senden Ihnen einen Link per E-Mail. Öffnen Sie ihn in diesem Browser, um sich anzumelden.',
  'magic.send': 'Anmeldelink per E-Mail senden',
  'magic.sent': 'Öffnen Sie den Link aus der E-Mail in diesem Browser.',
  'magic.resend': 'Neuen Link senden',
  'magic.other_browser':
    'Dieser Anmeldelink funktioniert nur in dem Browser, in dem Sie ihn angefordert haben. Öffnen Sie ihn dort oder beginnen Sie in diesem Browser erneut in der Anwendung.',
  'reset.forgot': 'Passwort vergessen?',
  'reset.title': 'Passwort zurücksetzen',
  'reset.new_title': 'Neues Passwort wählen',
  'reset.new_help':
    'Geben Sie ein neues Passwort für Ihr Konto ein. Es darf nicht Ihr aktuelles Passwort sein.',
  'reset.sent':
    'Falls ein Konto diese Adresse verwendet, haben wir ihm einen Code zum Zurücksetzen des Passworts gesendet. Geben Sie ihn hier ein.',
  'register.title': 'Konto erstellen',
  'register.email': 'E-Mail',
  'register.name': 'Name',
  'register.password': 'Passwort',
  'register.submit': 'Konto erstellen',
  'password.rule':
    'Mindestens 8 Zeichen. Häufige Passwörter, Namen und Tastaturmuster werden abgelehnt; einige Wörter ohne Zusammenhang sind leicht zu merken und stark.',
  'terms.title': 'Nutzungsbedingungen',
  'terms.help': 'Bitte lesen und akzeptieren Sie die Nutzungsbedingungen, um fortzufahren.',
  'terms.accept': 'Ich akzeptiere die Nutzungsbedingungen (Version {version})',
  'terms.submit': 'Weiter',
  'profile.title': 'Profil vervollständigen',
  'profile.help': 'Für Ihr Konto werden noch einige Angaben benötigt.',
  'profile.submit': 'Speichern',
  'deletion.title': 'Ihr Konto wird gelöscht',
  'deletion.help':
    'Sie haben die Löschung dieses Kontos beantragt. Behalten Sie es, um sich anzumelden; sonst wird es gelöscht.',
  'deletion.keep': 'Konto behalten',
  'password.other_methods': 'Ohne Passwort anmelden',
  'acct.register': 'Konto erstellen',
  'acct.delete_title': 'Konto löschen',
  'acct.delete_help':
    'Ihr Konto wird nach einer Wartezeit gelöscht. Wenn Sie sich vorher wieder anmelden, bleibt es erhalten.',
  'acct.delete_confirm': 'Ja, mein Konto löschen',
  'acct.delete': 'Konto löschen',
  'acct.deleted': 'Ihr Konto wird gelöscht. Melden Sie sich vor Ende der Wartezeit an, um es zu behalten.',
  'alt.email_otp': 'Stattdessen Code per E-Mail senden',
  'alt.sms_otp': 'Stattdessen Code per SMS senden',
  'alt.magic_link': 'Stattdessen Anmeldelink per E-Mail senden',

  'hotp.title': 'Bestätigung in zwei Schritten',
  'hotp.help':
    'Drücken Sie die Taste Ihres Sicherheitstokens und geben Sie den angezeigten 6-stelligen Code ein.',
  'hotp.code': 'Token-Code',
  'hotp.submit': 'Bestätigen',
  'hotp.failed':
    'Dieser Code ist falsch oder wurde schon verwendet. Drücken Sie die Taste für einen neuen Code.',
  'alt.hotp': 'Stattdessen den Sicherheitstoken verwenden',

  'remember_device.title': 'Diesen Browser merken?',
  'remember_device.help':
    'Den zweiten Schritt in diesem Browser künftig überspringen. Wählen Sie das nicht auf einem gemeinsam genutzten oder öffentlichen Computer.',
  'remember_device.yes': 'Diesen Browser merken',
  'remember_device.no': 'Jetzt nicht',

  'challenge.title': 'Bestätigen Sie, dass Sie es sind',
  'challenge.help':
    'Diese Anmeldung braucht eine zusätzliche Prüfung. Führen Sie die Prüfung durch und geben Sie die Antwort ein, die sie Ihnen gibt.',
  'challenge.response': 'Antwort der Prüfung',
  'challenge.submit': 'Weiter',
  'challenge.failed': 'Die Prüfung wurde nicht bestanden. Versuchen Sie es noch einmal.',
  'challenge.email_send': 'Stattdessen Code per E-Mail senden',
  'passkey.title': 'Mit Passkey anmelden',
  'passkey.help':
    'Verwenden Sie den Passkey auf diesem Gerät, Ihrem Telefon oder einem Sicherheitsschlüssel.',
  'passkey.submit': 'Passkey verwenden',
  'passkey.failed':
    'Der Passkey wurde nicht akzeptiert. Versuchen Sie es noch einmal oder melden Sie sich anders an.',
  'passkey.cancelled':
    'Die Passkey-Abfrage wurde geschlossen. Versuchen Sie es erneut, wenn Sie bereit sind.',
  'passkey.unsupported': 'Dieser Browser kann keine Passkeys verwenden.',
  'alt.webauthn': 'Stattdessen mit Passkey anmelden',
  'enroll_passkey.title': 'Passkey erstellen',
  'enroll_passkey.help':
    'Mit einem Passkey melden Sie sich per Fingerabdruck, Gesicht, Bildschirmsperre oder Sicherheitsschlüssel an statt mit einem Code.',
  'enroll_passkey.name': 'Name für diesen Passkey',
  'enroll_passkey.submit': 'Passkey erstellen',
  'alt.enroll_webauthn': 'Stattdessen einen Passkey erstellen',
  'code.authenticator_not_allowed':
    'Diese Art von Passkey oder Sicherheitsschlüssel ist hier nicht erlaubt. Verwenden Sie einen anderen.',
  'code.attestation_not_trusted':
    'Dieser Sicherheitsschlüssel konnte nicht als zugelassenes Modell bestätigt werden. Verwenden Sie einen anderen.',
  'code.feature_disabled': 'Das ist hier noch nicht verfügbar. Wenden Sie sich an Ihre Administration.',
  'code.invalid_credential': 'Der Passkey konnte nicht geprüft werden. Versuchen Sie es noch einmal.',
  'device.title': 'Gerät verbinden',
  'device.help': 'Geben Sie den Code ein, den Ihr Gerät anzeigt.',
  'device.code': 'Code',
  'device.submit': 'Weiter',
  'device.bad_code': 'Dieser Code ist ungültig oder abgelaufen. Prüfen Sie den Code auf Ihrem Gerät.',
  'device.done_title': 'Gerät verbunden',
  'device.done': 'Sie sind auf Ihrem Gerät angemeldet. Sie können jetzt zu Ihrem Gerät zurückkehren.',
  'device.denied': 'Das Gerät wurde nicht verbunden. Sie können diese Seite schließen.',
  'recovery_setup.title': 'Konto neu einrichten',
  'recovery_setup.help': 'Ihr Konto wurde wiederhergestellt. Wählen Sie ein neues Passwort dafür.',
  'recovery_setup.password': 'Neues Passwort',
  'recovery_setup.submit': 'Passwort speichern',
  'recovery_setup.done_title': 'Passwort gespeichert',
  'recovery_setup.done':
    'Melden Sie sich in der Anwendung, die Sie nutzen, mit dem neuen Passwort an. Danach richten Sie eine Authenticator-App ein.',
  'recovery_setup.invalid':
    'Dieser Link gilt nicht mehr: Er wurde schon benutzt oder ist abgelaufen. Bitten Sie den Support um einen neuen.',
  'recovery_setup.rejected':
    'Wählen Sie ein stärkeres Passwort oder eines, das Sie hier noch nicht verwendet haben.',
};
