/**
 * Mail: the e-mails the services sent, as the local mailbox of the embedded default received them
 * (`npm start` without SMTP_URL), newest first, each opened to its plain-text part. With an SMTP
 * server configured, the page says where e-mail goes instead (docker-compose: Mailpit's own UI).
 */
import { api } from '../api/operations';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { DataTable } from '../components/table';
import { timestamp } from '../format';
import { useRemote } from '../hooks';

const SHOWN = 100;

export function MailPage() {
  const mailbox = useRemote(() => api.localMailbox(SHOWN), []);
  return (
    <>
      <h1>Mail</h1>
      {mailbox.status === 'loading' ? <Loading what="the mailbox" /> : null}
      {mailbox.status === 'error' ? <ErrorMessage error={mailbox.error} what="the mailbox" onRetry={mailbox.reload} /> : null}
      {mailbox.status === 'ready' && !mailbox.data.enabled ? (
        <Empty>
          {mailbox.data.location ? (
            <>
              E-mail goes to the SMTP server at <code>{mailbox.data.location}</code>: read it there.
            </>
          ) : (
            'No SMTP server is configured (SMTP_URL): e-mails wait in the services until one is.'
          )}
        </Empty>
      ) : null}
      {mailbox.status === 'ready' && mailbox.data.enabled ? (
        <>
          <div class="toolbar">
            <span class="muted">
              The last {SHOWN} e-mails the local mailbox kept in <code>{mailbox.data.location}</code>.
            </span>
            <button type="button" class="button-secondary" onClick={mailbox.reload}>
              Refresh
            </button>
          </div>
          {mailbox.data.messages.length === 0 ? (
            <Empty>No e-mail yet: registrations, password resets and orders send some.</Empty>
          ) : (
            <DataTable testId="mail" columns={['Received', 'To', 'Subject and text']}>
              {mailbox.data.messages.map((mail) => (
                <tr key={mail.id} data-mail-id={mail.id}>
                  <td>{timestamp(mail.receivedAt)}</td>
                  <td>{mail.to.join(', ')}</td>
                  <td>
                    <details>
                      <summary data-testid="mail-subject">{mail.subject}</summary>
                      <pre class="mail-text">{mail.text}</pre>
                    </details>
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </>
      ) : null}
    </>
  );
}
